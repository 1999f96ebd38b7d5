#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Remembers the last string seen in one header field (path, interface,
/// member, sender...). Consecutive messages usually repeat them, and
/// comparing bytes is cheaper than allocating a new `String` each time.
/// Used on a connection's I/O thread only.
struct HeaderStringCache {
    private var bytes: [CChar] = [0]
    private var value = ""

    mutating func string(_ p: UnsafePointer<CChar>) -> String {
        let same = bytes.withUnsafeBufferPointer { b in b.baseAddress.map { strcmp($0, p) == 0 } ?? false }
        if same { return value }
        let n = strlen(p)
        bytes = Array(UnsafeBufferPointer(start: p, count: n + 1))
        value = String(cString: p)
        return value
    }
}
