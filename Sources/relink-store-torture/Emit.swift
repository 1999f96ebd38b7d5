#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to stdout with one unbuffered `write(2)`, so that what the
/// parent reads is exactly what was written before a SIGKILL.
func emit(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 { if errno == EINTR { continue }; return }
        offset += written
    }
}
