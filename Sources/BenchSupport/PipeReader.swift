public import Foundation

/// Reads a pipe to its end on a thread of its own, with blocking reads.
///
/// Not `FileHandle.readabilityHandler`: on Linux its libdispatch read source
/// can be torn down while the event loop still holds its epoll note, and the
/// test process then crashes in `_dispatch_event_loop_drain` (seen once in
/// a full `swift test` run with many bench processes started and stopped;
/// swift-corelibs-libdispatch issue 949, swift-corelibs-foundation issue
/// 3276). A blocking read registers nothing with libdispatch.
///
/// The reader works on its own duplicate of the descriptor, which it closes
/// at the end, so closing `handle` meanwhile cannot make it read a reused
/// descriptor. `chunk` gets each piece read, in order; `end` runs once, at
/// end of file or on a read error.
public func readToEnd(of handle: FileHandle, chunk: @escaping @Sendable (Data) -> Void,
                      end: @escaping @Sendable () -> Void) {
    let fd = dup(handle.fileDescriptor)
    guard fd >= 0 else {
        end()
        return
    }
    let thread = Thread {
        defer {
            close(fd)
            end()
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                chunk(Data(buffer[0..<n]))
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
    thread.name = "pipe-reader"
    thread.start()
}
