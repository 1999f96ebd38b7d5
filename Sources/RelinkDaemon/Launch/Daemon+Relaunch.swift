import DaemonCore
import Foundation
import Logging
import RelinkAPI
import RelinkModel
import RelinkStore
import Restoration

/// An input of the relaunch (``DaemonInput/relaunch(_:)``).
enum RelaunchInput: Sendable {
    /// The bus answered the `StartServiceByName` of a bus name.
    case answered(String, LaunchStartOutcome)
    /// A timer the ``RelaunchPolicy`` asked for fired.
    case timer(String)
}

// Relaunch (docs/relaunch.md), carried out: the core decides when a program
// is started and when to stop trying (DaemonCore+Relaunch.swift); this reads
// and stores the specs and the starts, asks the bus, sleeps the timers and
// journals each step. The restored state of the `Register` that answers a
// start carries the launch reason.
extension Daemon {
    /// Loads the stored launch specs and the starts of the last window, and
    /// weighs the events committed while relinkd was not reachable yet
    /// (start-up): from now on a program it starts can register.
    func openRelaunch() async {
        var specs: [RestoreIdentifier: LaunchSpec] = [:]
        do {
            let (stored, unreadable) = try await store.launchSpecs()
            specs = stored
            for row in unreadable {
                health.unreadableRows.append(row)
                logger.error("a stored launch spec cannot be read: kept in the store, not loaded", metadata: .journal([
                    .restoreID: "\(row.identifier ?? "")", .decision: "row-kept-aside", .errorMessage: "\(row.reason)",
                ]))
            }
        } catch {
            logger.error("cannot read the launch specs: no program is started until relinkd restarts", metadata: .journal([.error: "\(error)"]))
        }
        let attached = Set(api.attachments.filter { !$0.value.isEmpty }.keys)
        queue(core.handle(.relaunchOpened(specs: specs, startsBefore: await launchStartsBefore(), attached: attached, now: clock.now)))
    }

    /// The starts made in the window before this relinkd started (the
    /// store's `launch_start`), as instants of the loop's clock, for the start limit.
    private func launchStartsBefore() async -> [String: [DaemonClock.Instant]] {
        let window = core.relaunch.policy.limits.window
        let wallNow = Date(), now = clock.now
        do {
            let stored = try await store.launchStarts(since: wallNow.addingTimeInterval(-window.timeInterval))
            return stored.mapValues { dates in dates.map { now.advanced(by: .seconds($0.timeIntervalSince(wallNow))) } }
        } catch {
            logger.error("cannot read the recent program starts: the start limit counts afresh", metadata: .journal([.error: "\(error)"]))
            return [:]
        }
    }

    /// Called with what a commit stored: the core weighs each committed event.
    func relaunchCommitted(_ mutations: [StoreMutation]) {
        var events: [DaemonCore<DaemonClock>.CommittedEvent] = []
        for case .appendEvent(let draft) in mutations {
            events.append(.init(identifier: draft.identifier, kind: draft.kind, attached: !(api.attachments[draft.identifier]?.isEmpty ?? true)))
        }
        guard !events.isEmpty else { return }
        queue(core.handle(.eventsCommitted(events, now: clock.now)))
    }

    /// The bus answered a start, or a timer fired.
    func relaunchInput(_ input: RelaunchInput) {
        switch input {
        case .answered(let name, let outcome): queue(core.handle(.launchAnswered(name, outcome, now: clock.now)))
        case .timer(let name): queue(core.handle(.launchTimerFired(name, now: clock.now)))
        }
    }

    /// `Register` of `id`: the launch reason when it answers a start relinkd made.
    func launchReason(registering id: RestoreIdentifier) -> LaunchReason? {
        let reason = core.launchReason(registering: id, now: clock.now)
        if let reason {
            logger.info("relaunch: the started program registered", metadata: .journal([
                .restoreID: "\(id)", .busName: "\(reason.busName)", .decision: "relaunch-registered",
                .event: "\(reason.events.joined(separator: ","))",
            ]))
        }
        return reason
    }

    /// Sets (nil: removes) an identifier's launch spec, durably. The caller
    /// checked the spec (``Daemon/checkLaunch(_:for:)``) off the loop.
    func setLaunch(_ id: RestoreIdentifier, _ spec: LaunchSpec?) async throws(RelinkError) {
        guard core.relaunch.specs[id] != spec else { return }
        try await commit([.putLaunchSpec(id, spec)])
        queue(core.handle(.launchSpecStored(id, spec)))
    }

    /// An identifier is gone: its spec (the store's row went with it) and its waiting events.
    func relaunchForget(_ id: RestoreIdentifier) {
        queue(core.handle(.launchForgotten(id)))
    }

    /// Checks a launch spec for `caller`, off the loop: the bus can start
    /// the name and the caller could start it themselves.
    /// - Throws: `NotSupported` when relinkd starts no
    ///   programs; the launcher's `NotActivatable`, `NotPermitted`.
    nonisolated func checkLaunch(_ spec: LaunchSpec, for caller: APICaller) async throws(RelinkError) {
        guard let launcher = env.launcher else { throw RelinkError(.notSupported, "this relinkd starts no programs") }
        try await launcher.check(spec, uid: caller.uid)
    }

    /// Asks the bus (or the systemd manager) to start `spec`'s program for
    /// `reason`, off the loop, with the start stored first.
    func startProgram(_ reason: LaunchReason, spec: LaunchSpec) {
        guard let launcher = env.launcher else { return }
        logger.notice("relaunch: asking the bus (or the systemd manager) to start the program", metadata: .journal([
            .restoreID: "\(reason.identifiers.sorted().map(\.rawValue).joined(separator: ","))", .busName: "\(reason.busName)",
            .event: "\(reason.events.joined(separator: ","))", .decision: "relaunch-start",
        ]))
        let (store, logger, window) = (self.store, self.logger, core.relaunch.policy.limits.window)
        // Its owner: a unit is started on that user's own manager (root's: the system manager).
        let owner = reason.identifiers.sorted().lazy.compactMap { self.api.owners[$0] }.first
        loop.spawned.append { [reason] in
            // Durable before the bus is asked: the start counts in the
            // burst even if relinkd dies while the program starts.
            let now = Date()
            do {
                try await store.recordLaunchStart(reason.busName, at: now, keepingSince: now.addingTimeInterval(-window.timeInterval))
            } catch {
                logger.error("relaunch: cannot store the start: a relinkd restart would not count it in the start limit",
                             metadata: .journal([.busName: "\(reason.busName)", .error: "\(error)"]))
            }
            guard let owner else {
                return [.relaunch(.answered(reason.busName, .failed("the identifier has no owner: \(spec.systemdUnit ?? reason.busName) not started")))]
            }
            return [.relaunch(.answered(reason.busName, await launcher.start(spec, uid: owner)))]
        }
    }

    /// Carries out one of the relaunch's effects that needs no waiting.
    func performRelaunch(_ effect: DaemonCore<DaemonClock>.Effect) {
        let clock = self.clock
        switch effect {
        case .startProgram(let reason, let spec):
            startProgram(reason, spec: spec)
        case .programAnswered(let name, .alreadyRunning):
            logger.info("relaunch: the program already runs (it owns its bus name): nothing started", metadata: .journal([
                .busName: "\(name)", .decision: "relaunch-already-running",
            ]))
        case .programAnswered(let name, .started):
            logger.info("relaunch: the bus started the program; waiting for it to register", metadata: .journal([
                .busName: "\(name)", .decision: "relaunch-started",
            ]))
        case .relaunchTimer(let name, let at):
            input(.relaunch(.timer(name)), at: at)
        case .relaunchFailed(let name, let why, let retry, let waiting):
            logger.warning("relaunch: the program did not start", metadata: .journal([
                .restoreID: "\(waiting.map(\.rawValue).joined(separator: ","))", .busName: "\(name)", .error: "\(why)",
                .decision: "relaunch-failed", .duration: "\(retry.map { clock.now.duration(to: $0) } ?? .zero)",
            ]))
        case .relaunchLimitReached(let name, let starts, let until, let waiting):
            logger.error("relaunch: started \(starts) times within \(core.relaunch.policy.limits.window): not again before the window ends, then on the next event", metadata: .journal([
                .restoreID: "\(waiting.map(\.rawValue).joined(separator: ","))", .busName: "\(name)", .count: "\(starts)",
                .decision: "relaunch-limit-reached", .duration: "\(clock.now.duration(to: until))",
            ]))
        case .launchSpecChanged(let id, let spec):
            logger.info(spec == nil ? "launch spec removed" : "launch spec set", metadata: .journal([
                .restoreID: "\(id)", .busName: "\(spec?.busName ?? "")", .event: "\(spec?.wakeOn.joined(separator: ",") ?? "")",
                .decision: "launch-spec-set",
            ]))
        default:
            break
        }
    }
}

/// The relaunch part of `Status` (docs/relaunch.md#status): the loop's
/// ``RelaunchState`` as it was (copy-on-write), made into entries off the loop.
struct RelaunchStatus: Sendable {
    var state = DaemonCore<DaemonClock>.Relaunch()
    /// The loop's clock then, and the wall clock, to turn instants into Unix milliseconds.
    var now: DaemonClock.Instant?
    var wallNow = Date()

    init() {}

    init(state: DaemonCore<DaemonClock>.Relaunch, now: DaemonClock.Instant) {
        self.state = state
        self.now = now
    }

    /// An identifier's `launch` entry; nil when it has no spec.
    func entry(_ id: RestoreIdentifier) -> StatusDocument.Launch? {
        guard let spec = state.specs[id] else { return nil }
        let target = state.policy.targets[spec.busName]
        var entry = StatusDocument.Launch(
            busName: spec.busName, wakeOn: spec.wakeOn, systemdUnit: spec.systemdUnit, state: target?.phase.name ?? "idle",
            startsInWindow: target.map { t in t.starts.count { s in now.map { s.advanced(by: state.policy.limits.window) > $0 } ?? true } } ?? 0,
            lastError: target?.lastFailure)
        switch target?.phase {
        case .limited(let until)?, .backingOff(let until)?, .waitingForRegister(let until)?: entry.untilMs = unixMilliseconds(until)
        default: break
        }
        return entry
    }

    private func unixMilliseconds(_ instant: DaemonClock.Instant) -> Int64 {
        let ahead = now.map { $0.duration(to: instant) } ?? .zero
        return Int64(((wallNow.timeIntervalSince1970 + ahead.timeInterval) * 1000).rounded())
    }
}

extension Duration {
    /// The duration in seconds, as `Date` arithmetic takes it.
    fileprivate var timeInterval: TimeInterval { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
