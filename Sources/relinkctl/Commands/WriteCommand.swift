import ArgumentParser
import RelinkClient

/// `relinkctl write ID PERIPHERAL SERVICE CHAR VALUE [--text] [--without-response]`,
/// or `... --without-response --stream [--text]` with the values on stdin.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write", abstract: "Write a characteristic, or stream writes without response from stdin.",
        discussion: """
            The value is hex (01ff), or with --text its UTF-8 bytes (unlock). With --without-response \
            --stream, each line of stdin is one value (hex; with --text, the line's UTF-8 bytes), \
            written through a write stream with back-pressure (Central1.OpenWriteStream): a \
            value relinkd refuses (WriteQueueFull) is written again after ReadyToWrite, so none is lost. \
            Empty lines are skipped.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments
    @Argument(help: ArgumentHelp("The value: hex (e.g. 01ff), or text with --text; none with --stream.", valueName: "value")) var hex: String?
    @Flag(name: .customLong("without-response"), help: "Write without response.") var withoutResponse = false
    @Flag(help: "Stream writes without response, one value per line of stdin (needs --without-response).") var stream = false
    @Flag(help: "The value (with --stream: each line) is text, written as its UTF-8 bytes, not hex.") var text = false

    /// The bytes to write (not streamed).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): not hex, or
    ///   longer than the contract's limit.
    func value() throws(RelinkClientError) -> [UInt8] {
        let value = text ? Array((hex ?? "").utf8) : try RelinkArguments.hexBytes(hex ?? "")
        try RelinkArguments.checkValue(value)
        return value
    }

    /// One line of stdin as a value; nil for an empty line.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) naming the line.
    func value(ofLine line: String, number: Int) throws(RelinkClientError) -> [UInt8]? {
        let trimmed = text ? line : line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        do {
            let value = text ? Array(trimmed.utf8) : try RelinkArguments.hexBytes(trimmed)
            try RelinkArguments.checkValue(value)
            return value
        } catch {
            throw RelinkClientError(error.name, "stdin line \(number): \(error.message)")
        }
    }

    /// Checks the value (or the stream's flags) before relinkd is called.
    mutating func validate() throws {
        if stream {
            guard withoutResponse else { throw ValidationError("--stream writes without response: add --without-response.") }
            guard hex == nil else { throw ValidationError("--stream reads the values from stdin: give no value argument.") }
            return
        }
        guard hex != nil else { throw ValidationError("Missing expected argument '<value>' (or use --without-response --stream).") }
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try value() }
    }

    /// Calls `Central1.Write` with the value (with or without response),
    /// or streams stdin's values (``runStream()``).
    func run() async throws {
        if stream { return try await runStream() }
        let value = try value()
        try await global.withManager(identifier: target.identifier) { manager in
            try await manager.write(target.identifier, peripheral: target.peripheral, service: target.service,
                                    characteristic: target.characteristic, value: value, withResponse: !withoutResponse)
        }
        if global.json {
            Output.json(target.json.merging(["written": RelinkArguments.hex(value)]) { $1 })
        } else {
            Output.line("\(target.identifier): wrote \(value.count) byte(s)")
        }
    }

    /// Opens a write stream, writes each line of stdin through it (waiting
    /// for `ReadyToWrite` after each refusal), closes it, and prints the counts.
    func runStream() async throws {
        let (values, bytes, refused, maximum, transport) = try await global.withManager(identifier: target.identifier) { manager in
            let stream = try await manager.openWriteStream(target.identifier, peripheral: target.peripheral, service: target.service,
                                                           characteristic: target.characteristic)
            let transport = (try? await stream.properties().transport) ?? ""
            var values = 0, bytes = 0, refused = 0, number = 0
            do {
                while let line = readLine(strippingNewline: true) {
                    number += 1
                    guard let value = try value(ofLine: line, number: number) else { continue }
                    do {
                        refused += try await stream.writeWhenReady(value)
                    } catch let error as RelinkClientError {
                        throw RelinkClientError(error.name, "stdin line \(number): \(error.message)")
                    }
                    values += 1
                    bytes += value.count
                }
            } catch {
                try? await stream.close()
                throw error
            }
            try await stream.close()
            return (values, bytes, refused, stream.maximumLength, transport)
        }
        if global.json {
            Output.json(target.json.merging([
                "values": values, "bytes": bytes, "refused": refused, "maximumLength": maximum, "transport": transport,
            ]) { $1 })
        } else {
            Output.line("\(target.identifier): wrote \(values) value(s), \(bytes) byte(s) without response "
                        + "(\(refused) refused and written again after ReadyToWrite; at most \(maximum) bytes per value; \(transport))")
        }
    }
}
