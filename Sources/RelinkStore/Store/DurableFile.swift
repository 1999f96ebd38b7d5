#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// fsync by path: what makes a file, or a directory's entries (a name
/// created, renamed or removed), durable. One place for the clean-stop
/// marker and the store's first creation.
enum DurableFile {
    /// Opens `path` with `flags` (and `mode` when it creates it), fsyncs it
    /// and closes it; false when the open or the fsync failed (`errno` says why).
    static func sync(_ path: String, flags: Int32, mode: mode_t = 0o600) -> Bool {
        let fd = open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return fsync(fd) == 0
    }

    /// fsyncs the directory at `path`, so that its entries last.
    static func syncDirectory(_ path: String) -> Bool {
        sync(path, flags: O_RDONLY | O_DIRECTORY)
    }
}
