public import RelinkModel

/// The bounds (docs/relaunch.md#bounds gives these numbers).
public struct RelaunchLimits: Sendable, Hashable {
    /// At most this many starts of one program in ``window``.
    public var burst: Int
    /// The window ``burst`` counts in.
    public var window: Duration
    /// The wait before retrying after a first failed start.
    public var firstBackoff: Duration
    /// The longest wait between retries.
    public var maximumBackoff: Duration
    /// How long a started program has to `Register` one of its identifiers.
    public var registerTimeout: Duration

    /// relinkd's bounds: 5 starts in 30 s, retries after 0.5, 1, 2, 4, 8 s, 10 s to register.
    public static let standard = RelaunchLimits(burst: 5, window: .seconds(30), firstBackoff: .milliseconds(500),
                                        maximumBackoff: .seconds(8), registerTimeout: .seconds(10))

    /// - Parameters: as the properties.
    public init(burst: Int, window: Duration, firstBackoff: Duration, maximumBackoff: Duration, registerTimeout: Duration) {
        self.burst = burst
        self.window = window
        self.firstBackoff = firstBackoff
        self.maximumBackoff = maximumBackoff
        self.registerTimeout = registerTimeout
    }
}

/// How the bus answered `StartServiceByName`.
public enum LaunchStartOutcome: Sendable, Hashable {
    /// The bus started the program (`DBUS_START_REPLY_SUCCESS`).
    case started
    /// The name already had an owner (`DBUS_START_REPLY_ALREADY_RUNNING`): nothing was started.
    case alreadyRunning
    /// The bus could not start it (the error's name and message).
    case failed(String)
}

/// When relinkd starts a program by its D-Bus activatable name
/// (docs/relaunch.md), and when it stops trying.
///
/// One target per bus name (several identifiers may name the same
/// program: it is started once for all of them). An event committed for an
/// identifier with no attached client *waits* on its target; an idle target
/// with waiting events is started at once. A program already starting is
/// not started again: events that come meanwhile join the launch reason.
///
/// Bounds, as systemd's `StartLimitBurst=`/`StartLimitIntervalSec=` and
/// `RestartSec=`: a start that fails (the bus could not start it, or it did
/// not register within ``RelaunchLimits/registerTimeout``) is retried after a
/// backoff (``RelaunchLimits/firstBackoff``, doubled at each failure in a row, at
/// most ``RelaunchLimits/maximumBackoff``) while events wait; at most
/// ``RelaunchLimits/burst`` starts in any ``RelaunchLimits/window``; past that the target is
/// *limited*: nothing is started until the window has passed, and then
/// only on the next event (the events stay in the store meanwhile).
///
/// Pure: the daemon tells it what happened, with the time, and carries out
/// what it answers (a `StartServiceByName`, a timer, a journal line).
public struct RelaunchPolicy<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    /// Where a target is.
    public enum Phase: Sendable, Hashable {
        /// Nothing under way.
        case idle
        /// `StartServiceByName` was sent and has not been answered.
        case starting
        /// The bus started it; relinkd waits for a `Register` until the deadline.
        case waitingForRegister(until: Instant)
        /// A start failed; the next is tried at this instant if events wait.
        case backingOff(until: Instant)
        /// ``RelaunchLimits/burst`` starts in the window: nothing until then, and then on the next event.
        case limited(until: Instant)

        /// The phase's name in `Status` and relinkctl.
        public var name: String {
            switch self {
            case .idle: "idle"
            case .starting: "starting"
            case .waitingForRegister: "waiting-for-register"
            case .backingOff: "backing-off"
            case .limited: "limited"
            }
        }
    }

    /// What the daemon carries out.
    public enum Action: Sendable, Hashable {
        /// Ask the bus to start `busName`; `reason` is why.
        case start(LaunchReason)
        /// Call ``timerFired(_:now:)`` for the bus name at this instant.
        case timer(String, at: Instant)
        /// A start failed (journal it): the reason, and when the next is tried.
        case failed(String, why: String, retryAt: Instant?)
        /// The burst is used up (journal it): nothing is started before `until`.
        case limitReached(String, starts: Int, until: Instant)
    }

    /// One program's state.
    public struct Target: Sendable, Hashable {
        /// Where it is.
        public internal(set) var phase: Phase = .idle
        /// When it was started, within the last window.
        public internal(set) var starts: [Instant] = []
        /// Failed starts in a row.
        public internal(set) var failures = 0
        /// The last failure's text, kept until a program of the target registers.
        public internal(set) var lastFailure: String?
        /// Per identifier, the kinds of the events that wait for the program.
        public internal(set) var waiting: [RestoreIdentifier: Set<String>] = [:]
        /// The reason of the start under way, handed to each identifier that registers.
        public internal(set) var reason: LaunchReason?
    }

    /// The bounds in force.
    public let limits: RelaunchLimits
    /// The targets, by bus name.
    public private(set) var targets: [String: Target] = [:]

    /// - Parameter limits: the bounds (``RelaunchLimits/standard`` in relinkd).
    public init(limits: RelaunchLimits = .standard) { self.limits = limits }

    /// An event of `kind` was committed for `identifier`, which has no
    /// attached client and names `busName` with a spec that wakes on it.
    public mutating func eventWaiting(_ identifier: RestoreIdentifier, kind: String, busName: String, now: Instant) -> [Action] {
        var target = targets[busName] ?? Target()
        target.waiting[identifier, default: []].insert(kind)
        defer { targets[busName] = target }
        switch target.phase {
        case .idle: return start(&target, busName, now: now)
        case .limited(let until) where now >= until: return start(&target, busName, now: now)
        case .starting, .waitingForRegister, .backingOff, .limited: return []
        }
    }

    /// The bus answered the `StartServiceByName` of `busName`.
    public mutating func startAnswered(_ busName: String, _ outcome: LaunchStartOutcome, now: Instant) -> [Action] {
        guard var target = targets[busName], target.phase == .starting else { return [] }
        defer { targets[busName] = target }
        switch outcome {
        case .started:
            let deadline = now.advanced(by: limits.registerTimeout)
            target.phase = .waitingForRegister(until: deadline)
            return [.timer(busName, at: deadline)]
        case .alreadyRunning:
            // Not started by relinkd: no launch reason; it registers by itself.
            target.phase = .idle
            target.waiting = [:]
            target.reason = nil
            return []
        case .failed(let why):
            return fail(&target, busName, why: why, now: now)
        }
    }

    /// A client registered `identifier` (of `busName`'s program, when it
    /// has a spec). Returns the launch reason when a start relinkd made
    /// for it is answered by this registration.
    public mutating func registered(_ identifier: RestoreIdentifier, busName: String?, now: Instant) -> LaunchReason? {
        guard let busName, var target = targets[busName] else { return nil }
        defer { targets[busName] = target }
        let wasWaiting = target.waiting.removeValue(forKey: identifier) != nil
        switch target.phase {
        case .starting, .waitingForRegister:
            guard let reason = target.reason, reason.identifiers.contains(identifier) else { return nil }
            target.failures = 0
            target.lastFailure = nil
            if target.waiting.isEmpty { target.phase = .idle }
            return reason
        case .backingOff:
            // The program came back by itself.
            if wasWaiting {
                target.failures = 0
                target.lastFailure = nil
            }
            if target.waiting.isEmpty { target.phase = .idle; target.reason = nil }
            return nil
        case .idle, .limited:
            return nil
        }
    }

    /// A timer the policy asked for, for `busName`, fired.
    public mutating func timerFired(_ busName: String, now: Instant) -> [Action] {
        guard var target = targets[busName] else { return [] }
        defer { targets[busName] = target }
        switch target.phase {
        case .waitingForRegister(let deadline) where now >= deadline:
            // Nobody of the reason registered: the program did not come.
            if let reason = target.reason, reason.identifiers.allSatisfy({ target.waiting[$0] != nil }) {
                return fail(&target, busName, why: "the program did not register within \(limits.registerTimeout)", now: now)
            }
            // Some registered: the start worked; the rest are left to the next event.
            target.phase = .idle
            target.waiting = [:]
            target.reason = nil
            return []
        case .backingOff(let until) where now >= until:
            guard !target.waiting.isEmpty else {
                target.phase = .idle
                return []
            }
            return start(&target, busName, now: now)
        default:
            return []
        }
    }

    /// Counts starts made before relinkd restarted (the store's
    /// `launch_start` rows, as instants of this clock) in each target's
    /// burst, so a restart does not reset the bound. Starts at least a
    /// ``RelaunchLimits/window`` before `now` are left out.
    public mutating func restoreStarts(_ starts: [String: [Instant]], now: Instant) {
        for (name, instants) in starts {
            var target = targets[name] ?? Target()
            target.starts = (target.starts + instants.filter { $0.advanced(by: limits.window) > now }).sorted()
            targets[name] = target
        }
    }

    /// Forgets an identifier (unregistered, or its spec removed).
    public mutating func forget(_ identifier: RestoreIdentifier) {
        for name in targets.keys { targets[name]?.waiting[identifier] = nil }
    }

    /// Starts within the burst, else limits the target.
    private func start(_ target: inout Target, _ busName: String, now: Instant) -> [Action] {
        target.starts.removeAll { $0.advanced(by: limits.window) <= now }
        if target.starts.count >= limits.burst, let oldest = target.starts.first {
            let until = oldest.advanced(by: limits.window)
            let alreadyLimited = if case .limited = target.phase { true } else { false }
            target.phase = .limited(until: until)
            return alreadyLimited ? [] : [.limitReached(busName, starts: target.starts.count, until: until)]
        }
        target.starts.append(now)
        target.phase = .starting
        let events = target.waiting.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        let reason = LaunchReason(busName: busName, identifiers: Array(target.waiting.keys), events: Array(events))
        target.reason = reason
        return [.start(reason)]
    }

    /// A failed start: back off (retry while events wait), or limit.
    private func fail(_ target: inout Target, _ busName: String, why: String, now: Instant) -> [Action] {
        target.failures += 1
        target.lastFailure = why
        target.reason = nil
        var wait = limits.firstBackoff
        for _ in 1..<target.failures where wait < limits.maximumBackoff { wait = wait * 2 }
        wait = min(wait, limits.maximumBackoff)
        let retry = now.advanced(by: wait)
        target.phase = .backingOff(until: retry)
        return [.failed(busName, why: why, retryAt: retry), .timer(busName, at: retry)]
    }
}
