import Foundation
import Synchronization

/// Splits what a file handle delivers into lines, as an ordered async stream.
final class LineStream: Sendable {
    let lines: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let buffer = Mutex(Data())

    init(reading handle: FileHandle) {
        (lines, continuation) = AsyncStream.makeStream(of: String.self)
        readToEnd(of: handle, chunk: { [self] in append($0) }, end: { [self] in finish() })
    }

    private func append(_ chunk: Data) {
        let complete: [String] = buffer.withLock { buf in
            buf.append(chunk)
            var out: [String] = []
            while let nl = buf.firstIndex(of: UInt8(ascii: "\n")) {
                out.append(String(decoding: buf[buf.startIndex..<nl], as: UTF8.self))
                buf.removeSubrange(buf.startIndex...nl)
            }
            return out
        }
        for line in complete { continuation.yield(line) }
    }

    private func finish() {
        let rest = buffer.withLock { buf -> String? in
            defer { buf.removeAll() }
            return buf.isEmpty ? nil : String(decoding: buf, as: UTF8.self)
        }
        if let rest { continuation.yield(rest) }
        continuation.finish()
    }
}
