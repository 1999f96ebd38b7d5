import ArgumentParser
import Foundation
import RelinkClient

/// `relinkctl pair ID PERIPHERAL [--capability C] [--confirm | --passkey N | --reject]`.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with (bond to) a connected peripheral of a connection intent and trust it: Just Works, "
            + "or with --capability, answering its passkey or confirmation requests.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments
    @Option(help: "The agent's I/O capability (DisplayOnly, DisplayYesNo, KeyboardOnly, KeyboardDisplay, NoInputNoOutput); its requests are answered by --confirm, --passkey or --reject, or asked on the terminal.")
    var capability: String?
    @Flag(help: "Accept a confirmation (numeric comparison), authorization or shown passkey.")
    var confirm = false
    @Option(help: "The passkey the peripheral shows, for a passkey request.")
    var passkey: UInt32?
    @Flag(help: "Refuse every request.")
    var reject = false

    /// Calls `Central1.Pair`, or `PairWith` answering its requests.
    func run() async throws {
        guard let capability else {
            try await BondCall.run(global, target, paired: true, done: "paired and trusted") { try await $0.pair($1, peripheral: $2) }
            return
        }
        let (confirm, passkey, reject, json) = (confirm, passkey, reject, global.json)
        try await BondCall.run(global, target, paired: true, done: "paired and trusted") { manager, identifier, peripheral in
            try await manager.pair(identifier, peripheral: peripheral, capability: capability) { request in
                PairingPrompt.answer(request, confirm: confirm, passkey: passkey, reject: reject, json: json)
            }
        }
    }
}

/// How `relinkctl pair` answers a pairing request: from its flags, else on
/// the terminal, else no.
enum PairingPrompt {
    static func answer(_ request: RelinkPairingRequest, confirm: Bool, passkey: UInt32?, reject: Bool, json: Bool) -> RelinkPairingAnswer {
        let shown = request.passkey.map { String(format: "%06u", $0) }
        if !json { Output.line("pairing request \(request.request): \(request.kind)" + (shown.map { " \($0)" } ?? "")) }
        if reject { return .reject }
        if request.kind == "passkey" || request.kind == "pin-code" {
            if let passkey { return .passkey(passkey) }
        } else if confirm {
            return .accept
        }
        guard isatty(STDIN_FILENO) == 1 else { return .reject }
        let question = request.kind == "passkey" || request.kind == "pin-code" ? "passkey shown by the peripheral: " : "accept\(shown.map { " \($0)" } ?? "")? [y/N] "
        FileHandle.standardError.write(Data(question.utf8))
        guard let line = readLine()?.trimmingCharacters(in: .whitespaces) else { return .reject }
        if request.kind == "passkey" || request.kind == "pin-code" { return UInt32(line).map { .passkey($0) } ?? .reject }
        return line.lowercased().hasPrefix("y") ? .accept : .reject
    }
}

/// `relinkctl unpair ID PERIPHERAL`.
struct UnpairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpair",
        abstract: "Remove bluetoothd's bond with a peripheral no identifier uses any more (cancel and unsubscribe first).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments

    /// Calls `Central1.Unpair`.
    func run() async throws {
        try await BondCall.run(global, target, paired: false, done: "bond removed") { try await $0.unpair($1, peripheral: $2) }
    }
}

/// What `pair` and `unpair` share: one call about a peripheral's bond, then
/// one line (or its JSON with `paired`).
enum BondCall {
    static func run(_ global: GlobalOptions, _ target: PeripheralArguments, paired: Bool, done: String,
                    _ call: @escaping @Sendable (RelinkManager, String, String) async throws -> Void) async throws {
        let (identifier, peripheral) = (target.identifier, target.peripheral)
        try await global.withManager(identifier: identifier) { manager in
            try await call(manager, identifier, peripheral)
        }
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "paired": paired]) } else { Output.line("\(identifier): \(done) \(peripheral)") }
    }
}
