import CDBus
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The I/O thread of the loop: it opens the connection, then sends, polls,
/// reads and routes until the connection ends (see the threading notes on
/// ``ConnectionLoop``). Everything here runs on that thread only.
extension ConnectionLoop {
    func threadMain(address: String, started: CheckedContinuation<Started, any Error>) {
        var err = CDBus.DBusError()
        dbus_error_init(&err)
        guard let conn = dbus_connection_open_private(address, &err) else {
            started.resume(throwing: Self.take(&err))
            finish(DBusError(.disconnected, "connection failed"))
            return
        }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        guard dbus_bus_register(conn, &err) != 0 else {
            started.resume(throwing: Self.take(&err))
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            finish(DBusError(.disconnected, "connection failed"))
            return
        }
        let unique = dbus_bus_get_unique_name(conn).map { String(cString: $0) } ?? ""
        let fds = dbus_connection_can_send_type(conn, 104) != 0
        state.withLock { $0.loopThread = pthread_self() }
        started.resume(returning: Started(uniqueName: unique, canPassUnixFDs: fds))
        let reason = run(conn, canPassFDs: fds)
        // Fail waiters first: the flush below may block on a stuck bus.
        finish(reason)
        dbus_connection_flush(conn)
        dbus_connection_close(conn)
        dbus_connection_unref(conn)
    }

    private static func take(_ err: inout CDBus.DBusError) -> DBusError {
        let name = err.name.map { String(cString: $0) } ?? DBusError.Name.failed.rawValue
        let message = err.message.map { String(cString: $0) } ?? ""
        dbus_error_free(&err)
        return DBusError(.init(name), message)
    }

    /// The loop: send queued work, poll, read, route in order, expire.
    /// Returns why it ended.
    private func run(_ conn: OpaquePointer, canPassFDs: Bool) -> DBusError {
        var marshal = Marshal()
        let watches = Watches()
        guard watches.install(on: conn) else { return DBusError(.noMemory, "could not install watches") }
        defer { watches.uninstall(from: conn) }
        var fds: [pollfd] = []
        var polled: [OpaquePointer] = []
        while true {
            // Run tasks that prefer this thread; the jobs they enqueue (a
            // serve loop starting a handler, a handler finishing) run in the
            // same turn, up to a bound so that I/O is never starved. What a
            // job queued for sending goes out before the next job runs: a
            // signal or reply does not wait for unrelated work queued behind
            // it (relinkd's Event for a value, say, for the store commit
            // that value's handler also started).
            for _ in 0..<16 {
                let jobs = state.withLock { s in
                    let j = s.jobs
                    s.jobs.removeAll(keepingCapacity: true)
                    s.wakeRequested = false
                    return j
                }
                if jobs.isEmpty { break }
                for job in jobs {
                    runJob(job)
                    if state.withLock({ !$0.outgoing.isEmpty }), sendQueued(conn, canPassFDs: canPassFDs) {
                        return DBusError(.disconnected, "connection closed")
                    }
                }
            }
            if sendQueued(conn, canPassFDs: canPassFDs) {
                return DBusError(.disconnected, "connection closed")
            }
            var timeout: Int32 = -1
            if dbus_connection_get_dispatch_status(conn) == DBUS_DISPATCH_DATA_REMAINS {
                timeout = 0
            } else {
                let (earliest, busy) = state.withLock { ($0.earliestDeadline, !$0.jobs.isEmpty || !$0.outgoing.isEmpty) }
                if busy {
                    timeout = 0
                } else if earliest != .max {
                    let now = IOThread.now()
                    timeout = earliest <= now ? 0 : Int32(min((earliest - now + 999_999) / 1_000_000, 60_000))
                }
            }
            fds.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            watches.pollEntries(into: &fds, watches: &polled)
            var readable = false
            let n = poll(&fds, nfds_t(fds.count), timeout)
            if n < 0, errno != EINTR {
                return DBusError(.ioError, "poll failed: errno \(errno)")
            }
            if n > 0 {
                if fds[0].revents != 0 {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                }
                readable = watches.handle(fds, from: 1, watches: polled)
            }
            var batch: [Message] = []
            pop(conn, into: &batch, marshal: &marshal)
            // libdbus reads at most 2 KiB per call: in a burst (a read that
            // brought several messages), read on while reads bring whole
            // messages, so the burst is handled in large batches (one
            // wake-up and one stream hand-off per batch). Request/response
            // traffic does not pay the extra read.
            if readable, batch.count >= 4 {
                for _ in 0..<32 where batch.count < 1024 {
                    let before = batch.count
                    watches.readAgain()
                    pop(conn, into: &batch, marshal: &marshal)
                    if batch.count == before { break }
                }
            }
            if !batch.isEmpty, route(batch) {
                return DBusError(.disconnected, "the bus closed the connection")
            }
            // What inline handlers queued goes out now, not after the jobs.
            if state.withLock({ !$0.outgoing.isEmpty }), sendQueued(conn, canPassFDs: canPassFDs) {
                return DBusError(.disconnected, "connection closed")
            }
            if dbus_connection_get_is_connected(conn) == 0,
                dbus_connection_get_dispatch_status(conn) != DBUS_DISPATCH_DATA_REMAINS
            {
                return DBusError(.disconnected, "the bus closed the connection")
            }
            expire()
        }
    }

    private func pop(_ conn: OpaquePointer, into batch: inout [Message], marshal: inout Marshal) {
        while let msg = dbus_connection_pop_message(conn) {
            if let m = marshal.decode(msg) { batch.append(m) }
            dbus_message_unref(msg)
        }
    }
}
