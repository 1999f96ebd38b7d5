import Foundation
import RelinkClient
import RelinkModel

/// stdout/stderr writing, JSON documents and the exit codes.
enum Output {
    /// The exit codes of docs/relinkctl.md (0 is success).
    enum ExitStatus {
        /// relinkd replied an error, or an argument is malformed (`InvalidArguments`).
        static let relinkdError: Int32 = 1
        /// Usage: no or unknown command or option, a missing or mistyped value.
        static let usage: Int32 = 2
        /// relinkd cannot be reached.
        static let unreachable: Int32 = 3
        /// Unknown identifier or peripheral.
        static let unknown: Int32 = 4
    }

    /// The exit code for a client error.
    static func exitCode(for error: RelinkClientError) -> Int32 {
        if error.isUnreachable { return ExitStatus.unreachable }
        if error.isUnknownObject { return ExitStatus.unknown }
        return ExitStatus.relinkdError
    }

    /// Prints "relinkctl: <name>: <message>" on stderr and exits with the documented code.
    static func fail(_ error: RelinkClientError) -> Never {
        flush()
        Output.error("relinkctl: \(error.name.rawValue): \(error.message)")
        terminate(exitCode(for: error))
    }

    /// `message` with every single-quoted value longer than the model's
    /// echo limit cut short (ArgumentParser quotes a rejected value whole):
    /// `'xxx'… (10000 bytes)`, as ``RelinkArguments/echo(_:)`` does.
    static func shortened(_ message: String) -> String {
        var out = ""
        var rest = Substring(message)
        while let open = rest.firstIndex(of: "'") {
            out += rest[...open]
            let value = rest[rest.index(after: open)...]
            guard let close = value.firstIndex(of: "'") else {
                rest = value
                break
            }
            let quoted = value[..<close]
            if quoted.count > DomainError.echoLimit {
                out += quoted.prefix(DomainError.echoLimit) + "'… (\(quoted.utf8.count) bytes)"
            } else {
                out += quoted + "'"
            }
            rest = value[value.index(after: close)...]
        }
        return out + rest
    }

    /// One line on stdout.
    static func line(_ text: String) {
        print(text)
    }

    /// One line on stderr.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Flushes stdout (before stderr is written, or between live lines).
    static func flush() { fflush(nil) }

    /// Flushes stdout and ends the process with `code`.
    static func terminate(_ code: Int32) -> Never {
        fflush(nil)
        exit(code)
    }

    /// One JSON document (sorted keys) on one line of stdout.
    static func json(_ object: Any) {
        print(jsonText(object))
        flush()
    }

    /// `object` as JSON text with sorted keys (`null` when it is not valid JSON).
    static func jsonText(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Parsed JSON text, or the text itself when it does not parse.
    static func parsed(_ text: String) -> Any {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) ?? text
    }
}
