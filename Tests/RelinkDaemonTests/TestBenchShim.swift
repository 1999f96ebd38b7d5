// A copy of Tests/BlueZTests/TestBenchShim.swift until BenchSupport replaces both.
// Temporary: replaced by BenchSupport.Bench when the bench branch lands.
import Foundation

final class TestBench: Sendable {
    let process: Process
    let stdin: FileHandle
    let reader: LineReader
    let busAddress: String
    let ready: [String: any Sendable]

    static func start(_ args: [String]) async throws -> TestBench {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let p = Process()
        p.executableURL = root.appendingPathComponent("bench/run-bench")
        p.arguments = args
        let inPipe = Pipe(), outPipe = Pipe()
        p.standardInput = inPipe
        p.standardOutput = outPipe
        try p.run()
        let reader = LineReader(handle: outPipe.fileHandleForReading)
        guard let line = reader.next(),
              let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let bus = obj["bus"] as? String else { throw CocoaError(.fileReadCorruptFile) }
        return TestBench(process: p, stdin: inPipe.fileHandleForWriting, reader: reader, bus: bus)
    }

    private init(process: Process, stdin: FileHandle, reader: LineReader, bus: String) {
        self.process = process; self.stdin = stdin; self.reader = reader; self.busAddress = bus; self.ready = [:]
    }

    @discardableResult
    func send(_ cmd: [String: Any]) throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: cmd)
        stdin.write(data + Data("\n".utf8))
        guard let line = reader.next(), let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        if obj["ok"] as? Bool != true { throw CocoaError(.featureUnsupported, userInfo: ["error": obj["error"] ?? ""]) }
        return obj
    }

    func stop() {
        try? stdin.close()
        process.waitUntilExit()
    }
}

final class LineReader: Sendable {
    let handle: FileHandle
    init(handle: FileHandle) { self.handle = handle }
    func next() -> String? {
        var bytes: [UInt8] = []
        while true {
            let d = handle.readData(ofLength: 1)
            if d.isEmpty { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if d[0] == 10 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(d[0])
        }
    }
}
