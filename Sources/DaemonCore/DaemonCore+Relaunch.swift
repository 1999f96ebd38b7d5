public import RelinkModel
public import Restoration

// Relaunch (docs/relaunch.md): when an event is committed for an identifier
// with a launch spec and no attached client, its program is started; the
// ``RelaunchPolicy`` decides when, and when to stop trying. Events committed
// before relinkd owns its bus name wait until it does: a program started
// earlier could not register.
extension DaemonCore {
    /// Each identifier's launch spec and the policy of when to start its program.
    public struct Relaunch: Sendable {
        /// The stored launch specs, by identifier.
        public internal(set) var specs: [RestoreIdentifier: LaunchSpec] = [:]
        /// When to start, when to stop trying.
        public internal(set) var policy = RelaunchPolicy<C.Instant>()
        /// False until relinkd owns its bus name. Events meanwhile wait in ``held``.
        public internal(set) var open = false
        /// The kinds of the events committed, per identifier, before relinkd was reachable.
        public internal(set) var held: [RestoreIdentifier: Set<String>] = [:]
        /// Whether this relinkd starts programs at all (it has a launcher).
        public var enabled = false

        /// No spec, closed, starting no program.
        public init() {}

        /// The identifiers whose events wait for the program of `busName`, sorted.
        public func waiting(for busName: String) -> [RestoreIdentifier] {
            (policy.targets[busName]?.waiting.keys).map { $0.sorted() } ?? []
        }
    }

    /// One event the store committed, as relaunch weighs it.
    public struct CommittedEvent: Sendable, Hashable {
        /// Its identifier.
        public var identifier: RestoreIdentifier
        /// Its kind (`value`, `disconnected`, ...).
        public var kind: String
        /// Whether a client of the identifier is attached now (then nothing is started).
        public var attached: Bool

        /// An event committed for `identifier`.
        public init(identifier: RestoreIdentifier, kind: String, attached: Bool) {
            self.identifier = identifier
            self.kind = kind
            self.attached = attached
        }
    }

    /// relinkd owns its bus name: the stored specs of registered
    /// identifiers are loaded, the starts made before this relinkd counted
    /// in the start limit, and the events held meanwhile weighed (none of
    /// their identifiers in `attached`).
    mutating func relaunchOpened(specs: [RestoreIdentifier: LaunchSpec], startsBefore: [String: [C.Instant]],
                                 attached: Set<RestoreIdentifier>, now: C.Instant) -> [Effect] {
        relaunch.specs = specs.filter { identifiers.contains($0.key) }
        relaunch.policy.restoreStarts(startsBefore, now: now)
        relaunch.open = true
        let held = relaunch.held
        relaunch.held = [:]
        var events: [CommittedEvent] = []
        for (id, kinds) in held.sorted(by: { $0.key < $1.key }) {
            for kind in kinds.sorted() { events.append(CommittedEvent(identifier: id, kind: kind, attached: attached.contains(id))) }
        }
        return eventsCommitted(events, now: now)
    }

    /// Events are in the store: each starts its identifier's program when
    /// it has a spec that wakes on its kind and no client is attached.
    mutating func eventsCommitted(_ events: [CommittedEvent], now: C.Instant) -> [Effect] {
        guard relaunch.enabled else { return [] }
        var effects: [Effect] = []
        for event in events {
            guard relaunch.open else {
                relaunch.held[event.identifier, default: []].insert(event.kind)
                continue
            }
            guard let spec = relaunch.specs[event.identifier], spec.wakes(on: event.kind), !event.attached else { continue }
            let actions = relaunch.policy.eventWaiting(event.identifier, kind: event.kind, busName: spec.busName, now: now)
            effects += relaunchEffects(actions)
        }
        return effects
    }

    /// The bus answered the start of `busName`'s program.
    mutating func launchAnswered(_ busName: String, _ outcome: LaunchStartOutcome, now: C.Instant) -> [Effect] {
        guard relaunch.enabled else { return [] }
        let actions = relaunch.policy.startAnswered(busName, outcome, now: now)
        return [.programAnswered(busName, outcome)] + relaunchEffects(actions)
    }

    /// A relaunch timer of `busName` fired.
    mutating func launchTimerFired(_ busName: String, now: C.Instant) -> [Effect] {
        guard relaunch.enabled else { return [] }
        let actions = relaunch.policy.timerFired(busName, now: now)
        return relaunchEffects(actions)
    }

    /// An identifier registers: the launch reason when this answers a start
    /// relinkd made for it (the restored state carries it), else nil.
    public mutating func launchReason(registering id: RestoreIdentifier, now: C.Instant) -> LaunchReason? {
        relaunch.policy.registered(id, busName: relaunch.specs[id]?.busName, now: now)
    }

    /// An identifier's launch spec was stored (nil: removed); a removed one
    /// forgets its waiting events.
    mutating func launchSpecStored(_ id: RestoreIdentifier, _ spec: LaunchSpec?) -> [Effect] {
        guard relaunch.specs[id] != spec else { return [] }
        relaunch.specs[id] = spec
        if spec == nil { relaunch.policy.forget(id) }
        return [.launchSpecChanged(id, spec)]
    }

    /// An identifier is gone: its spec, its held and its waiting events.
    mutating func launchForgotten(_ id: RestoreIdentifier) -> [Effect] {
        relaunch.specs[id] = nil
        relaunch.held[id] = nil
        relaunch.policy.forget(id)
        return []
    }

    /// The policy's actions as effects; a start names the spec of the first
    /// of its identifiers (sorted) that has one (they share its bus name).
    /// Reads the policy as it is after the actions were decided: take them
    /// into a local first (an argument is evaluated after `self` is read).
    private func relaunchEffects(_ actions: [RelaunchPolicy<C.Instant>.Action]) -> [Effect] {
        actions.map { action in
            switch action {
            case .start(let reason):
                let spec = reason.identifiers.sorted().lazy.compactMap { relaunch.specs[$0] }.first ?? LaunchSpec(busName: reason.busName)
                return .startProgram(reason, spec: spec)
            case .timer(let name, let at):
                return .relaunchTimer(name, at: at)
            case .failed(let name, let why, let retry):
                return .relaunchFailed(name, why: why, retryAt: retry, waiting: relaunch.waiting(for: name))
            case .limitReached(let name, let starts, let until):
                return .relaunchLimitReached(name, starts: starts, until: until, waiting: relaunch.waiting(for: name))
            }
        }
    }
}
