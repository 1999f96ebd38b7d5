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

// Relaunch (docs/relaunch.md): when an event is committed for an
// identifier with a launch spec and no attached client, the bus is asked
// to start its program; the core's ``RelaunchPolicy`` decides when, and
// when to stop trying. The restored state of the `Register` that answers a
// start carries the launch reason.
extension Daemon {
    /// Loads the stored launch specs and weighs the events committed while
    /// relinkd was not reachable yet (start-up): from now on a program it
    /// starts can register.
    func openRelaunch() async {
        do {
            let (specs, unreadable) = try await store.launchSpecs()
            api.relaunch.specs = specs.filter { core.identifiers.contains($0.key) }
            for row in unreadable {
                health.unreadableRows.append(row)
                logger.error("a stored launch spec cannot be read: kept in the store, not loaded", metadata: .journal([
                    .restoreID: "\(row.identifier ?? "")", .decision: "row-kept-aside", .errorMessage: "\(row.reason)",
                ]))
            }
        } catch {
            logger.error("cannot read the launch specs: no program is started until relinkd restarts", metadata: .journal([.error: "\(error)"]))
        }
        await restoreLaunchStarts()
        api.relaunch.open = true
        let held = api.relaunch.held
        api.relaunch.held = [:]
        for (id, kinds) in held.sorted(by: { $0.key < $1.key }) {
            for kind in kinds.sorted() { eventCommitted(id, kind: kind) }
        }
    }

    /// Counts the starts made in the window before this relinkd started
    /// (the store's `launch_start`) in the start limit.
    private func restoreLaunchStarts() async {
        let window = api.relaunch.policy.limits.window
        let wallNow = Date(), now = clock.now
        do {
            let stored = try await store.launchStarts(since: wallNow.addingTimeInterval(-window.timeInterval))
            let instants = stored.mapValues { dates in dates.map { now.advanced(by: .seconds($0.timeIntervalSince(wallNow))) } }
            api.relaunch.policy.restoreStarts(instants, now: now)
        } catch {
            logger.error("cannot read the recent program starts: the start limit counts afresh", metadata: .journal([.error: "\(error)"]))
        }
    }

    /// Called with what a commit stored: weighs each committed event.
    func relaunchCommitted(_ mutations: [StoreMutation]) {
        for case .appendEvent(let draft) in mutations {
            eventCommitted(draft.identifier, kind: draft.kind)
        }
    }

    /// An event of `kind` for `id` is in the store: start its program when
    /// it has a spec that wakes on it and no client is attached.
    private func eventCommitted(_ id: RestoreIdentifier, kind: String) {
        guard api.relaunch.open else {
            if env.launcher != nil { api.relaunch.held[id, default: []].insert(kind) }
            return
        }
        guard let spec = api.relaunch.specs[id], spec.wakes(on: kind), api.attachments[id]?.isEmpty ?? true, env.launcher != nil else { return }
        performRelaunch(api.relaunch.policy.eventWaiting(id, kind: kind, busName: spec.busName, now: clock.now))
    }

    /// The bus answered a start, or a timer fired.
    func relaunchInput(_ input: RelaunchInput) {
        switch input {
        case .answered(let name, let outcome):
            if outcome == .alreadyRunning {
                logger.info("relaunch: the program already runs (it owns its bus name): nothing started", metadata: .journal([
                    .busName: "\(name)", .decision: "relaunch-already-running",
                ]))
            } else if outcome == .started {
                logger.info("relaunch: the bus started the program; waiting for it to register", metadata: .journal([
                    .busName: "\(name)", .decision: "relaunch-started",
                ]))
            }
            performRelaunch(api.relaunch.policy.startAnswered(name, outcome, now: clock.now))
        case .timer(let name):
            performRelaunch(api.relaunch.policy.timerFired(name, now: clock.now))
        }
    }

    /// `Register` of `id`: the launch reason when it answers a start relinkd made.
    func launchReason(registering id: RestoreIdentifier) -> LaunchReason? {
        let reason = api.relaunch.policy.registered(id, busName: api.relaunch.specs[id]?.busName, now: clock.now)
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
        guard api.relaunch.specs[id] != spec else { return }
        try await commit([.putLaunchSpec(id, spec)])
        api.relaunch.specs[id] = spec
        if spec == nil { api.relaunch.policy.forget(id) }
        logger.info(spec == nil ? "launch spec removed" : "launch spec set", metadata: .journal([
            .restoreID: "\(id)", .busName: "\(spec?.busName ?? "")", .event: "\(spec?.wakeOn.joined(separator: ",") ?? "")",
            .decision: "launch-spec-set",
        ]))
    }

    /// An identifier is gone: its spec (the store's row went with it) and its waiting events.
    func relaunchForget(_ id: RestoreIdentifier) {
        api.relaunch.specs[id] = nil
        api.relaunch.held[id] = nil
        api.relaunch.policy.forget(id)
    }

    /// Checks a launch spec for `caller`, off the loop: the bus can start
    /// the name and the caller could start it themselves.
    /// - Throws: `NotSupported` when relinkd starts no
    ///   programs; the launcher's `NotActivatable`, `NotPermitted`.
    nonisolated func checkLaunch(_ spec: LaunchSpec, for caller: APICaller) async throws(RelinkError) {
        guard let launcher = env.launcher else { throw RelinkError(.notSupported, "this relinkd starts no programs") }
        try await launcher.check(spec, uid: caller.uid)
    }

    /// Carries out the policy's actions.
    private func performRelaunch(_ actions: [RelaunchPolicy<DaemonClock.Instant>.Action]) {
        guard let launcher = env.launcher else { return }
        let clock = self.clock
        for action in actions {
            switch action {
            case .start(let reason):
                logger.notice("relaunch: asking the bus (or the systemd manager) to start the program", metadata: .journal([
                    .restoreID: "\(reason.identifiers.map(\.rawValue).joined(separator: ","))", .busName: "\(reason.busName)",
                    .event: "\(reason.events.joined(separator: ","))", .decision: "relaunch-start",
                ]))
                let (store, logger, window) = (self.store, self.logger, api.relaunch.policy.limits.window)
                // The spec of an identifier of the start (they share its bus name).
                let spec = reason.identifiers.lazy.compactMap { self.api.relaunch.specs[$0] }.first ?? LaunchSpec(busName: reason.busName)
                // Its owner: a unit is started on that user's own manager (root's: the system manager).
                let owner = reason.identifiers.lazy.compactMap { self.api.owners[$0] }.first
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
            case .timer(let name, let at):
                loop.spawned.append {
                    do { try await clock.sleep(until: at) } catch { return [] }
                    return [.relaunch(.timer(name))]
                }
            case .failed(let name, let why, let retry):
                logger.warning("relaunch: the program did not start", metadata: .journal([
                    .restoreID: "\(waiting(name))", .busName: "\(name)", .error: "\(why)", .decision: "relaunch-failed",
                    .duration: "\(retry.map { clock.now.duration(to: $0) } ?? .zero)",
                ]))
            case .limitReached(let name, let starts, let until):
                logger.error("relaunch: started \(starts) times within \(api.relaunch.policy.limits.window): not again before the window ends, then on the next event", metadata: .journal([
                    .restoreID: "\(waiting(name))", .busName: "\(name)", .count: "\(starts)", .decision: "relaunch-limit-reached",
                    .duration: "\(clock.now.duration(to: until))",
                ]))
            }
        }
    }

    /// The identifiers whose events wait for `name`'s program, for the journal.
    private func waiting(_ name: String) -> String {
        (api.relaunch.policy.targets[name]?.waiting.keys.map(\.rawValue) ?? []).sorted().joined(separator: ",")
    }
}

/// The relaunch part of `Status` (docs/relaunch.md#status): the loop's
/// ``RelaunchState`` as it was (copy-on-write), made into entries off the loop.
struct RelaunchStatus: Sendable {
    var state = RelaunchState()
    /// The loop's clock then, and the wall clock, to turn instants into Unix milliseconds.
    var now: DaemonClock.Instant?
    var wallNow = Date()

    init() {}

    init(state: RelaunchState, now: DaemonClock.Instant) {
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
