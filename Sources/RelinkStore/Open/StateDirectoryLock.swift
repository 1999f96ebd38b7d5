import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on `<state directory>/relink.lock`, held while the
/// store is open: two relinkd on one state directory would each apply its
/// own clients' requests to the one database and restore from state the
/// other changed under it. The holder writes its PID into the file so that
/// a second opener can name it. The file is never removed (removing a lock
/// file races with the next opener); a lock dies with its process.
final class StateDirectoryLock: Sendable {
    /// The lock file's name inside the state directory.
    static let fileName = "relink.lock"

    private let descriptor: Mutex<Int32?>

    private init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    /// How long a held lock is waited for before the directory is called in use.
    static let patience: Duration = .seconds(1)

    /// Takes the lock on `directory`, waiting at most ``patience`` for it.
    /// - Throws: `StoreOpenError.stateDirectoryInUse` when another process
    ///   holds it; `.fileUnavailable` when the lock file cannot be opened or locked.
    static func acquire(directory: String) throws(StoreOpenError) -> StateDirectoryLock {
        let path = directory + "/" + fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno, why = String(cString: strerror(code))
            throw .fileUnavailable(path: path, cause: code == EACCES || code == EPERM ? .permissionDenied(why) : .cannotOpen(why))
        }
        // A lock just released can still be held for a moment: a child that
        // another thread of its process spawned keeps a copy of the
        // descriptor from fork to exec (O_CLOEXEC closes it only at exec).
        // So "in use" is said only after `patience`.
        let deadline = ContinuousClock.now + patience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK, ContinuousClock.now < deadline {
                usleep(5_000)
                continue
            }
            close(fd)
            if code == EWOULDBLOCK { throw .stateDirectoryInUse(path: directory, holder: holder(path)) }
            throw .fileUnavailable(path: path, cause: .cannotOpen("flock: \(String(cString: strerror(code)))"))
        }
        // Best effort: a holder that cannot write its PID still holds the lock.
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        return StateDirectoryLock(descriptor: fd)
    }

    /// The PID the holder wrote, if it can be read.
    private static func holder(_ path: String) -> Int32? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return Int32(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Releases the lock (closing the file); later calls do nothing.
    func release() {
        descriptor.withLock { fd in
            if let open = fd { close(open) }
            fd = nil
        }
    }

    deinit { release() }
}
