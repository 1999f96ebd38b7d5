import CDBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The libdbus watches of one connection, kept on its I/O thread only (the
/// class is not Sendable and never leaves `ConnectionLoop.run`).
///
/// Handling a ready watch with `dbus_watch_handle` reads or writes the
/// socket directly; `dbus_connection_read_write(conn, 0)` would first poll
/// the socket again, one extra system call per wake-up.
final class Watches {
    private(set) var list: [OpaquePointer] = []

    /// Installs the watch callbacks. `self` must outlive the connection's use
    /// (it lives for the whole `run`, which removes the callbacks at the end).
    func install(on conn: OpaquePointer) -> Bool {
        let ud = Unmanaged.passUnretained(self).toOpaque()
        return dbus_connection_set_watch_functions(
            conn,
            { watch, ud in
                guard let watch, let ud else { return 0 }
                Unmanaged<Watches>.fromOpaque(ud).takeUnretainedValue().list.append(watch)
                return 1
            },
            { watch, ud in
                guard let watch, let ud else { return }
                let w = Unmanaged<Watches>.fromOpaque(ud).takeUnretainedValue()
                w.list.removeAll { $0 == watch }
            },
            nil, ud, nil) != 0
    }

    func uninstall(from conn: OpaquePointer) {
        _ = dbus_connection_set_watch_functions(conn, nil, nil, nil, nil, nil)
        list.removeAll()
    }

    /// Poll entries for the enabled watches, appended to `fds`, with the
    /// watch each entry stands for.
    func pollEntries(into fds: inout [pollfd], watches: inout [OpaquePointer]) {
        for w in list where dbus_watch_get_enabled(w) != 0 {
            let flags = dbus_watch_get_flags(w)
            var events: Int16 = 0
            if flags & 1 != 0 { events |= Int16(POLLIN) }
            if flags & 2 != 0 { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: dbus_watch_get_unix_fd(w), events: events, revents: 0))
            watches.append(w)
        }
    }

    /// Asks libdbus to read once more from every enabled read watch (the
    /// socket is non-blocking: with nothing there, this costs one `recvmsg`).
    func readAgain() {
        for w in list where dbus_watch_get_enabled(w) != 0 && dbus_watch_get_flags(w) & 1 != 0 {
            guard list.contains(w) else { continue }
            _ = dbus_watch_handle(w, 1)
        }
    }

    /// Hands poll results to libdbus (which reads or writes). Returns
    /// whether something was readable.
    @discardableResult
    func handle(_ fds: [pollfd], from offset: Int, watches: [OpaquePointer]) -> Bool {
        var readable = false
        for (i, w) in watches.enumerated() {
            let r = fds[offset + i].revents
            guard r != 0, list.contains(w) else { continue }  // a handled watch may remove others
            var flags: UInt32 = 0
            if r & Int16(POLLIN) != 0 {
                flags |= 1
                readable = true
            }
            if r & Int16(POLLOUT) != 0 { flags |= 2 }
            if r & Int16(POLLERR) != 0 { flags |= 4 }
            if r & Int16(POLLHUP) != 0 { flags |= 8 }
            _ = dbus_watch_handle(w, flags)
        }
        return readable
    }
}
