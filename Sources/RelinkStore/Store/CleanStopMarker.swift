import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file in the state directory saying that the last writer closed the
/// store after every write had committed (``RelinkStore/close(markingCleanStop:)``).
///
/// relinkd shows events to attached clients before their commit, with
/// sequence numbers it chose; after a crash it must not hand those numbers
/// out again, so it skips ahead. The marker tells it that no skip is
/// needed. It is consumed (removed, and the removal made durable) when the
/// store opens, so that a crash of the next run is never mistaken for a
/// clean stop.
struct CleanStopMarker {
    static let fileName = "relink.clean-stop"
    let directory: String

    var path: String { directory + "/" + Self.fileName }

    /// Removes the marker durably; true if it was there and is now gone.
    func consume() -> Bool {
        guard unlink(path) == 0 else { return false }
        return DurableFile.syncDirectory(directory)
    }

    /// Writes the marker durably.
    /// - Throws: `StoreError.io` when it cannot be written.
    func write() throws(StoreError) {
        guard DurableFile.sync(path, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600) else {
            throw .io("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        guard DurableFile.syncDirectory(directory) else { throw .io("cannot sync \(path): \(String(cString: strerror(errno)))") }
    }
}
