import BenchSupport
import Foundation
import Testing

/// relinkctl's exit codes and messages where relinkd cannot answer: usage
/// errors (2), bad arguments caught before any call (1, InvalidArguments),
/// no relinkd on the bus or no bus at all (3).
@Suite struct ExitCodeTests {
    static let noBus = "unix:path=/nonexistent/relinkctl-test-bus"

    @Test func usageErrorsExitTwoWithUsageOnStderr() async throws {
        for arguments in [["bogus"], ["show"], ["scan"], ["connect", "id"], ["events", "id", "--after", "x"], ["write", "a", "b", "c"]] {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("Usage: relinkctl"), "\(arguments): \(result)")
        }
        let help = try await CtlProcess.run(["--help"])
        #expect(help.status == 0 && help.stdout.contains("events") && help.stdout.contains("peripherals"))
    }

    @Test func badArgumentsExitOneWithInvalidArgumentsBeforeAnyCall() async throws {
        let cases: [[String]] = [
            ["scan", "front-door", "not-a-uuid"],
            ["connect", "front-door", "lock"],
            ["connect", "front-door", "00:00:00:00:00:02", "--timeout", "0"],
            ["connect", "front-door", "00:00:00:00:00:02", "--strategy", "teleport"],
            ["connect", "front-door", "00:00:00:00:00:02", "--match-name", ""],
            ["connect", "front-door", "00:00:00:00:00:02", "--match-service", "nope"],
            ["connect", "front-door", "00:00:00:00:00:02", "--pairing-capability", "keyboard"],
            ["subscribe", "front-door", "00:00:00:00:00:02", "180d", "2a3"],
            ["write", "front-door", "00:00:00:00:00:02", "180d", "2a37", "0g"],
            ["write", "front-door", "00:00:00:00:00:02", "180d", "2a37", String(repeating: "00", count: 513)],
            ["show", ""],
            ["register", String(repeating: "x", count: 129)],
            ["register", "café"],
            ["connect", "front-door", "00:00:00:00:00:02", "--timeout", "5", "--strategy", "scan", "--strategy", "scan"],
            ["connect", "front-door", "00:00:00:00:00:02", "--timeout", "86401"],
            ["register", "front-door", "--event-limit", "0"],
            ["register", "front-door", "--event-limit", "100001"],
        ]
        for arguments in cases {
            // The bus does not exist: only a check made before connecting can answer.
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("relinkctl: org.relink.Error.InvalidArguments: "), "\(arguments): \(result)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(result.stdout.isEmpty)
        }
    }

    /// A mistyped command is named as an unknown command, with the closest
    /// one when it is close, else the list of commands; usage follows, exit 2.
    @Test func anUnknownCommandIsNamedWithTheClosestOne() async throws {
        let typo = try await CtlProcess.run(["--bus-address", Self.noBus, "--json", "statu"])
        #expect(typo.status == 2 && typo.stdout.isEmpty, "\(typo)")
        #expect(typo.stderr.hasPrefix("Error: unknown command 'statu'; did you mean 'status'?\n"), "\(typo)")
        #expect(typo.stderr.contains("Usage: relinkctl"), "\(typo)")
        let far = try await CtlProcess.run(["frobnicate", "x"])
        #expect(far.status == 2, "\(far)")
        #expect(far.stderr.hasPrefix("Error: unknown command 'frobnicate'; the commands: status, list,"), "\(far)")
        // A known command with a bad option is the parser's usual error.
        let option = try await CtlProcess.run(["status", "--bogus"])
        #expect(option.status == 2 && !option.stderr.contains("unknown command"), "\(option)")
    }

    /// `relinkctl` with no command (or only global options) is a usage
    /// error like any other: usage and the commands on stderr, exit 2.
    @Test func noCommandIsAUsageErrorThatListsTheCommands() async throws {
        for arguments in [[], ["--json"], ["--bus-address", Self.noBus]] {
            let result = try await CtlProcess.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("Error: Missing a command"), "\(arguments): \(result)")
            #expect(result.stderr.contains("Usage: relinkctl"), "\(arguments): \(result)")
            for command in ["status", "register", "events", "peripherals"] {
                #expect(result.stderr.contains(command), "\(arguments): \(command) missing in \(result)")
            }
        }
    }

    /// A negative number is read as the option's value and rejected by the
    /// command's check, not taken for an unknown option ("Missing value").
    @Test func negativeNumbersAreValuesThatTheChecksReject() async throws {
        let timeouts: [[String]] = [
            ["connect", "front-door", "00:00:00:00:00:02", "--timeout", "-1"],
            ["connect", "front-door", "00:00:00:00:00:02", "--timeout=-1"],
            ["connect", "front-door", "00:00:00:00:00:02", "--timeout", "-0.5", "--strategy", "scan"],
        ]
        for arguments in timeouts {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("relinkctl: org.relink.Error.InvalidArguments: timeout must be > 0"), "\(arguments): \(result)")
            #expect(!result.stderr.contains("Missing value"), "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
        }
        // Options whose type has no negative values: a usage error naming the value.
        let unsigned: [[String]] = [
            ["events", "front-door", "--after", "-1"],
            ["register", "front-door", "--event-limit", "-5"],
            ["connect", "front-door", "00:00:00:00:00:02", "--match-manufacturer-id", "-1"],
        ]
        for arguments in unsigned {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("Error: The value '-"), "\(arguments): \(result)")
            #expect(!result.stderr.contains("Missing value"), "\(arguments): \(result)")
        }
    }

    /// A malformed argument is named in a message of bounded length: a
    /// 10,000-character argument is never echoed back whole, by relinkctl's
    /// checks or by the parser.
    @Test func longArgumentsAreShortenedInMessages() async throws {
        let long = String(repeating: "x", count: 10_000)
        let address = "00:00:00:00:00:02"
        let cases: [(arguments: [String], status: Int32)] = [
            (["show", long], 1),
            (["connect", "front-door", long], 1),
            (["cancel", "front-door", long], 1),
            (["scan", "front-door", long], 1),
            (["read", "front-door", address, long, "2a37"], 1),
            (["write", "front-door", address, "180d", "2a37", long], 1),
            (["connect", "front-door", address, "--strategy", long], 1),
            (["connect", "front-door", address, "--address-type", long], 1),
            (["connect", "front-door", address, "--match-name", long], 1),
            (["register", "front-door", "--name-rule", long], 1),
            (["events", "front-door", "--after", long], 2),
            (["connect", "front-door", address, "--timeout", long], 2),
            (["status", long], 2),
            ([long], 2),
        ]
        for (arguments, status) in cases {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            let shown = arguments.map { $0.count > 20 ? "<\($0.count) chars>" : $0 }
            #expect(result.status == status, "\(shown): exit \(result.status)")
            #expect(!result.stderr.contains(String(repeating: "x", count: 100)), "\(shown): \(result.stderr.prefix(300))")
            #expect(result.stderr.utf8.count < 1_000, "\(shown): \(result.stderr.utf8.count) bytes on stderr")
            #expect(result.stdout.isEmpty)
        }
    }

    /// One condition, one message: every command that takes an identifier
    /// (or a peripheral) rejects the same bad value with the same line.
    @Test func theSameBadArgumentGetsTheSameMessageFromEveryCommand() async throws {
        let address = "00:00:00:00:00:02"
        func commands(identifier: String, peripheral: String) -> [[String]] {
            [
                ["show", identifier], ["register", identifier], ["scan", identifier], ["stop-scan", identifier],
                ["events", identifier], ["forget", identifier], ["connect", identifier, peripheral],
                ["cancel", identifier, peripheral], ["subscribe", identifier, peripheral, "180d", "2a37"],
                ["unsubscribe", identifier, peripheral, "180d", "2a37"], ["read", identifier, peripheral, "180d", "2a37"],
                ["write", identifier, peripheral, "180d", "2a37", "00"],
            ]
        }
        let tooLong = String(repeating: "i", count: 129)
        let badIdentifiers = commands(identifier: tooLong, peripheral: address)
        let badPeripherals = commands(identifier: "front-door", peripheral: "lock").filter { $0.count > 2 }
        for group in [badIdentifiers, badPeripherals] {
            var lines: Set<String> = []
            for arguments in group {
                let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
                #expect(result.status == 1, "\(arguments.prefix(1)): \(result)")
                lines.insert(result.stderr)
            }
            #expect(lines.count == 1, "\(lines.sorted())")
        }
        let identifierLine = try await CtlProcess.run(["--bus-address", Self.noBus, "show", tooLong]).stderr
        #expect(identifierLine.hasPrefix("relinkctl: org.relink.Error.InvalidArguments: invalid restore identifier "), "\(identifierLine)")
        #expect(identifierLine.contains("longer than 128 bytes"), "\(identifierLine)")
    }

    @Test func noBusExitsThree() async throws {
        for arguments in [["status"], ["--json", "list"], ["show", "front-door"], ["events", "front-door", "--follow"]] {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 3, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("relinkctl: org.freedesktop.DBus.Error."), "\(result)")
            // Says where relinkctl looked and how to point it elsewhere.
            #expect(result.stderr.contains("/nonexistent/relinkctl-test-bus") && result.stderr.contains("DBUS_SYSTEM_BUS_ADDRESS"), "\(result)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result)")
        }
    }

    /// relinkd stopped: every command says so, naming the bus, and exits 3
    /// (not the bus's "not provided by any .service files").
    @Test func noRelinkdOnTheBusExitsThreeSayingItIsNotRunning() async throws {
        try await CtlHarness.with(startRelinkd: false) { h in
            let explanation = "relinkd is not running (no owner of org.relink on \(h.bus)); "
                + "start it with `systemctl start relinkd`, or run `relinkd` on that bus\n"
            let commands: [[String]] = [
                ["status"], ["list"], ["--json", "list"], ["show", "front-door"], ["register", "front-door"],
                ["scan", "front-door"], ["stop-scan", "front-door"], ["connect", "front-door", "00:00:00:00:00:02"],
                ["cancel", "front-door", "00:00:00:00:00:02"], ["read", "front-door", "00:00:00:00:00:02", "180d", "2a37"],
                ["peripherals"], ["--json", "events", "front-door"], ["events", "front-door", "--follow"], ["forget", "front-door"],
            ]
            for arguments in commands {
                let result = try await h.ctl(arguments)
                #expect(result.status == 3, "\(arguments): \(result)")
                #expect(result.stderr.hasPrefix("relinkctl: org.freedesktop.DBus.Error.ServiceUnknown: ")
                        || result.stderr.hasPrefix("relinkctl: org.freedesktop.DBus.Error.NameHasNoOwner: "), "\(arguments): \(result)")
                #expect(result.stderr.hasSuffix(": " + explanation), "\(arguments): \(result)")
                #expect(!result.stderr.contains(".service files"), "\(arguments): \(result)")
                #expect(result.stdout.isEmpty)
            }
        }
    }
}
