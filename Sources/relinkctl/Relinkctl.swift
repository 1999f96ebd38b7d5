import ArgumentParser
import RelinkAPI
import RelinkClient

/// The `relinkctl` command: its subcommands, and ``main()``, which maps
/// every outcome to the documented exit codes (docs/relinkctl.md).
@main
struct Relinkctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relinkctl",
        abstract: "Drive and inspect relinkd: restore identifiers, scans, connections, subscriptions and events.",
        discussion: """
            Exit codes: 0 ok, 1 relinkd replied an error or an argument is malformed (printed on stderr as \
            "relinkctl: <org.relink.Error.Name>: <message>"), 2 usage, 3 cannot reach relinkd, \
            4 unknown identifier or peripheral. --json prints one JSON document on stdout \
            (JSON lines with events --follow).
            """,
        version: RelinkVersion.string,
        subcommands: [
            StatusCommand.self, ListCommand.self, ShowCommand.self, RegisterCommand.self, ScanCommand.self,
            StopScanCommand.self, ConnectCommand.self, CancelCommand.self, PairCommand.self, UnpairCommand.self, SubscribeCommand.self,
            UnsubscribeCommand.self, ReadCommand.self, WriteCommand.self, TransferCommand.self, GattCommand.self, ReadDescriptorCommand.self, WriteDescriptorCommand.self,
            EventsCommand.self, ForgetCommand.self, LaunchCommand.self,
            PeripheralsCommand.self, RetrieveCommand.self, ConnectionEventsCommand.self,
            PeripheralRoleCommand.self, PublishCommand.self, UnpublishCommand.self, AdvertiseCommand.self, StopAdvertisingCommand.self,
            RespondCommand.self, UpdateCommand.self,
        ])

    @OptionGroup var global: GlobalOptions

    /// No command given: a usage error (exit 2) that names the commands.
    func run() async throws {
        throw ValidationError("Missing a command: one of \(Self.commandNames.joined(separator: ", ")).")
    }

    /// Parses, runs, and maps every failure to the documented exit codes.
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitForParse(error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let error as RelinkClientError {
            Output.fail(error)
        } catch {
            exitForParse(error)
        }
        Output.terminate(0)
    }

    /// Help and version exit 0 (on stdout); an argument a command's
    /// `validate()` refused is `InvalidArguments` (exit 1, as relinkd's
    /// reply would be); every other parse or validation error is a usage
    /// error: message on stderr (long values shortened), exit 2.
    private static func exitForParse(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        if code == .success { Self.exit(withError: error) }
        if let failed = ArgumentCheck.failed { Output.fail(failed) }
        if let e = error as? ExitCode { Output.terminate(e.rawValue) }
        if let unknown = unknownCommand(in: Array(CommandLine.arguments.dropFirst())) {
            Output.error(Output.shortened(unknown + "\nUsage: " + usageString() + "\n  See 'relinkctl --help' for more information."))
        } else {
            Output.error(Output.shortened(fullMessage(for: error)))
        }
        Output.terminate(Output.ExitStatus.usage)
    }

    /// The commands' names.
    static var commandNames: [String] { configuration.subcommands.compactMap { $0.configuration.commandName } }

    /// "Error: unknown command 'X'" (with the closest command, when one is
    /// close) when the first word that is not a global option is not a
    /// command; nil when it is one, or there is none.
    static func unknownCommand(in arguments: [String]) -> String? {
        var rest = arguments[...]
        while let first = rest.first, first.hasPrefix("-") {
            rest = rest.dropFirst(first == "--bus-address" ? 2 : 1)  // its value is the next word
        }
        guard let word = rest.first, !commandNames.contains(word) else { return nil }
        let message = "Error: unknown command '\(word)'"
        let distances = commandNames.map { ($0, editDistance(word, $0)) }
        guard let best = distances.min(by: { $0.1 < $1.1 }), best.1 <= max(1, word.count / 3) else {
            return message + "; the commands: \(commandNames.joined(separator: ", "))."
        }
        return message + "; did you mean '\(best.0)'?"
    }

    /// Levenshtein distance between two words (for the suggestion above).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)  // distances from a's first i characters to b's prefixes
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
