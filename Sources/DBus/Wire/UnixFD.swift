#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An owned Unix file descriptor carried in a D-Bus message (type `h`).
///
/// The descriptor is closed when the last reference goes away. Sending
/// duplicates it (libdbus `dup`s on append), so the original stays yours.
/// Descriptors received in a message are owned by the `UnixFD` values made
/// for them. Two values are equal when they refer to the same file (same
/// device and inode).
public final class UnixFD: Hashable, Sendable, CustomStringConvertible {
    /// The raw descriptor; valid while this object lives.
    public let rawValue: Int32

    /// Takes ownership of `fd`: it will be closed on deinit.
    public init(takingOwnershipOf fd: Int32) { self.rawValue = fd }

    /// Duplicates `fd` (with close-on-exec); the caller keeps `fd`.
    /// - Throws: ``DBusError`` (`failed`) when `dup` fails (bad descriptor,
    ///   too many open files).
    public init(duplicating fd: Int32) throws(DBusError) {
        let d = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard d >= 0 else { throw DBusError(.failed, "dup(\(fd)) failed: errno \(errno)") }
        self.rawValue = d
    }

    deinit { close(rawValue) }

    /// Gives up ownership: returns a duplicate that the caller must close.
    /// - Throws: ``DBusError`` (`failed`) when `dup` fails.
    public func duplicateRaw() throws(DBusError) -> Int32 {
        let d = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        guard d >= 0 else { throw DBusError(.failed, "dup(\(rawValue)) failed: errno \(errno)") }
        return d
    }

    private var identity: (UInt64, UInt64) {
        var st = stat()
        guard fstat(rawValue, &st) == 0 else { return (UInt64.max, UInt64(bitPattern: Int64(rawValue))) }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    /// Equal when both refer to the same open file (same device and
    /// inode), whatever the descriptor numbers.
    public static func == (a: UnixFD, b: UnixFD) -> Bool { a === b || a.identity == b.identity }
    /// Hashes the device and inode, consistent with `==`.
    public func hash(into h: inout Hasher) {
        let i = identity
        h.combine(i.0)
        h.combine(i.1)
    }
    /// `fd(N)` with the descriptor number.
    public var description: String { "fd(\(rawValue))" }
}
