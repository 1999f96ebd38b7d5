import ArgumentParser
import DBus
import RelinkAPI
import RelinkClient

/// `relinkctl events ID [--after N] [--follow] [--ack]`.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Print an identifier's stored events (and live ones with --follow).",
        discussion: """
            Each event on one line: its sequence number, its kind, the peripheral and what the event says \
            (values in hex, and as text when printable). --json prints each event with its payload as JSON \
            (docs/api/events.md). --ack acknowledges each event once printed (relinkd then deletes it).
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Option(parsing: .unconditional, help: ArgumentHelp("Only events whose sequence number is greater than this one.", valueName: "sequence"))
    var after: UInt64 = 0
    @Flag(help: "Keep printing live events (JSON lines with --json) until interrupted.") var follow = false
    @Flag(help: "Acknowledge the printed events.") var ack = false

    /// How `--follow` ended.
    enum FollowEnd {
        /// relinkd left the bus.
        case relinkdLeft
        /// The connection to the bus ended.
        case busClosed
        /// The identifier was unregistered (forgotten) meanwhile.
        case forgotten
    }

    /// Prints the stored events after `--after` (paged), acknowledging them with `--ack`; with `--follow`, live events until relinkd leaves the bus (exit 3).
    func run() async throws {
        let identifier = target.identifier
        let path = try APIPath.central(for: identifier)
        if follow {
            let end = try await global.withManager(identifier: identifier) { manager in
                try await followEvents(manager, path: path.rawValue)
            }
            // Thrown here, not in the connection helper: relinkd was there
            // and left, which the helper would call "not running".
            switch end {
            case .relinkdLeft:
                throw RelinkClientError(.init(DBusError.Name.nameHasNoOwner.rawValue), "relinkd left the bus.")
            case .busClosed:
                throw RelinkClientError(.init(DBusError.Name.disconnected.rawValue), "The connection to the bus ended.")
            case .forgotten:
                let unknown = RelinkClientError.unknownIdentifier(identifier)
                throw RelinkClientError(unknown.name, "The restore identifier \"\(identifier)\" was forgotten (unregistered) while followed.")
            }
        }
        try await global.withManager(identifier: identifier) { manager in
            var all: [RelinkClientEvent] = []
            var cursor = after
            while true {
                let page = try await manager.events(identifier, after: cursor)
                all += page
                guard let last = page.last, page.count == Int(RelinkArguments.maximumEvents) else { break }
                cursor = last.sequence
            }
            if global.json {
                Output.json(["identifier": identifier, "events": all.map(JSONForms.event)])
            } else {
                for e in all { Output.line(Self.text(e)) }
                Output.flush()
            }
            if ack, let last = all.last { try await manager.acknowledge(identifier, through: last.sequence) }
        }
    }

    /// One event as a line for people (``EventLine``): `SEQ KIND DETAILS`.
    static func text(_ e: RelinkClientEvent) -> String { EventLine.text(e) }

    /// Watch, then print each event of the identifier once, in order,
    /// until relinkd leaves the bus, the identifier is forgotten or the
    /// connection ends (or the process is interrupted).
    private func followEvents(_ manager: RelinkManager, path: String) async throws -> FollowEnd {
        let signals = try await manager.eventSignals()
        let owners = try await manager.relinkdOwnerChanges()
        let removals = try await manager.removedCentrals()
        try await manager.watch(target.identifier, after: after)
        let (identifier, json, ack, after) = (target.identifier, global.json, ack, after)
        // relinkd's departure, or the identifier's removal, ends the
        // subscription; the events relinkd sent before are already
        // buffered (bus order) and still printed.
        return try await withThrowingTaskGroup(of: FollowEnd?.self) { group in
            group.addTask(operation: Self.end(.relinkdLeft, stopping: signals, onFirstOf: owners) { $0.newOwner == nil })
            group.addTask(operation: Self.end(.forgotten, stopping: signals, onFirstOf: removals) { $0 == path })
            var last = after
            for try await (from, event) in signals where from == path && event.sequence > last {
                last = event.sequence
                if json { Output.json(JSONForms.event(event)) } else { Output.line(Self.text(event)); Output.flush() }
                if ack { try await manager.acknowledge(identifier, through: event.sequence) }
            }
            let end = try await group.next() ?? nil
            group.cancelAll()
            removals.cancel()
            return end ?? .busClosed
        }
    }

    /// A task that waits for the first element of `sequence` that
    /// `matches` (the follow's `end`), or for `sequence` to end (nil), then
    /// ends `signals`: the loop printing them drains what is buffered and
    /// stops.
    private static func end<S: AsyncSequence & Sendable>(
        _ end: FollowEnd, stopping signals: RelinkEventSignals, onFirstOf sequence: S,
        where matches: @escaping @Sendable (S.Element) -> Bool
    ) -> @Sendable () async -> FollowEnd? {
        {
            var matched = false
            do {
                for try await element in sequence where matches(element) {
                    matched = true
                    break
                }
            } catch {}
            signals.cancel()
            return matched ? end : nil
        }
    }
}
