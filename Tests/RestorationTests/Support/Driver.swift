@testable import Restoration
import RelinkModel

/// Plays the daemon's actor for one machine: keeps the timers it asks for
/// on a ManualClock and fires them in order when time advances, and lets a
/// `world` answer BlueZ requests at once (as a fake BlueZ would).
struct Driver {
    /// Answers an action with an input, or nil for no answer.
    typealias World = (Action) -> ((inout Machine) -> [Action])?

    let clock: ManualClock
    var machine: Machine
    var timers: [TimerToken: ManualClock.Instant] = [:]
    var world: World = { _ in nil }
    /// Every action performed, unless `recording` is off (long simulations).
    var performed: [Action] = []
    var recording = true
    var maxOutstandingTimers = 0

    init(options: ConnectionOptions = Fixtures.options(), knownAddress: BluetoothAddress? = Fixtures.lockAddress, random: any RandomSource = FixedRandom(value: 0.5)) {
        let clock = ManualClock()
        self.clock = clock
        self.machine = Machine(intent: Fixtures.lockIntent, options: options, knownAddress: knownAddress, clock: clock, random: random)
    }

    var state: Machine.State { machine.state }

    /// Sends an input; performs and returns the resulting actions (then the
    /// inputs the world answers them with, in order).
    @discardableResult
    mutating func send(_ input: (inout Machine) -> [Action]) -> [Action] {
        let actions = input(&machine)
        var all = actions
        for action in actions { perform(action) }
        for action in actions {
            if let answer = world(action) { all += send(answer) }
        }
        return all
    }

    private mutating func perform(_ action: Action) {
        if recording { performed.append(action) }
        switch action {
        case .scheduleTimer(let token, let instant):
            timers[token] = instant
            maxOutstandingTimers = max(maxOutstandingTimers, timers.count)
        case .cancelTimer(let token):
            timers[token] = nil
        default:
            break
        }
    }

    /// Advances the clock by `duration`, firing due timers in deadline order.
    @discardableResult
    mutating func advance(by duration: Duration) -> [Action] {
        let target = clock.now.advanced(by: duration)
        var all: [Action] = []
        while let (token, instant) = timers.filter({ $0.value <= target }).min(by: { ($0.value, $0.key.id) < ($1.value, $1.key.id) }) {
            clock.advance(to: instant)
            timers[token] = nil
            all += send { $0.timerFired(token) }
        }
        clock.advance(to: target)
        return all
    }

    /// When backing off, advances to the end of the backoff (starting the
    /// next round) and returns the interval waited; nil otherwise.
    @discardableResult
    mutating func finishBackoff() -> Duration? {
        guard case .backingOff(let until, _) = state else { return nil }
        let interval = clock.now.duration(to: until)
        advance(by: interval)
        return interval
    }

    /// Finishes the backoff and the next round's 15 s scan step; returns
    /// everything done meanwhile.
    mutating func finishBackoffAndRound() -> [Action] {
        guard case .backingOff(let until, _) = state else { return [] }
        return advance(by: clock.now.duration(to: until)) + advance(by: .seconds(15))
    }

    /// The token of the outstanding timer with this purpose.
    func timer(_ purpose: TimerToken.Purpose) -> TimerToken? {
        timers.keys.first { $0.purpose == purpose }
    }
}

extension Array where Element == Action {
    var events: [RelinkEvent] {
        compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    var decisions: [Decision] {
        compactMap { if case .log(let decision) = $0 { decision } else { nil } }
    }

    var connects: [BluetoothAddress] {
        compactMap { if case .connect(let address) = $0 { address } else { nil } }
    }

    var disconnects: [BluetoothAddress] {
        compactMap { if case .disconnect(let address) = $0 { address } else { nil } }
    }

    var scans: [ScanIntent] {
        compactMap { if case .startScan(let intent) = $0 { intent } else { nil } }
    }

    var records: [ConnectionIntentRecord] {
        compactMap { if case .persist(let record) = $0 { record } else { nil } }
    }

    /// The BlueZ-facing requests only (no timers, logs, events, persists, words to sharers).
    var requests: [Action] {
        filter {
            switch $0 {
            case .log, .scheduleTimer, .cancelTimer, .emit, .persist, .tellSharers: false
            default: true
            }
        }
    }

    func contains(decision name: String) -> Bool { decisions.contains { $0.kind.name == name } }
}
