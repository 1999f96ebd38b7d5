import RelinkModel
import Restoration
import Testing

/// The relaunch policy on hand-moved time: once per start, the launch
/// reason, backoff, the burst in the window, and trying again after it.
@Suite("Relaunch policy")
struct RelaunchPolicyTests {
    typealias Policy = RelaunchPolicy<ManualClock.Instant>
    let door = id("front-door"), band = id("band")
    static let name = "org.example.Lock"

    func at(_ seconds: Double) -> ManualClock.Instant { ManualClock.Instant(offset: .milliseconds(Int64(seconds * 1000))) }

    @Test func anEventStartsTheProgramOnceAndItsRegistrationGetsTheReason() throws {
        var policy = Policy()
        let first = policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: at(0))
        #expect(first == [.start(LaunchReason(busName: Self.name, identifiers: [door], events: ["value-notified"]))])
        // Already starting: no second start, the reason grows.
        #expect(policy.eventWaiting(door, kind: "disconnected", busName: Self.name, now: at(0.1)) == [])
        #expect(policy.eventWaiting(band, kind: "value-notified", busName: Self.name, now: at(0.1)) == [])
        #expect(policy.startAnswered(Self.name, .started, now: at(0.2)) == [.timer(Self.name, at: at(10.2))])
        #expect(policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: at(0.3)) == [])
        let answered = policy.registered(door, busName: Self.name, now: at(0.4))
        let reason = try #require(answered)
        #expect(reason.identifiers == [door] && reason.events == ["value-notified"], "the reason of the start that was made")
        #expect(policy.targets[Self.name]?.phase == .waitingForRegister(until: at(10.2)), "band still waits")
        // The deadline after a registration is no failure.
        #expect(policy.timerFired(Self.name, now: at(10.2)) == [])
        #expect(policy.targets[Self.name]?.phase == .idle && policy.targets[Self.name]?.failures == 0)
    }

    @Test func aRegistrationWithoutAStartHasNoReason() {
        var policy = Policy()
        #expect(policy.registered(door, busName: Self.name, now: at(0)) == nil)
        #expect(policy.registered(door, busName: nil, now: at(0)) == nil)
        _ = policy.eventWaiting(door, kind: "connected", busName: Self.name, now: at(0))
        #expect(policy.startAnswered(Self.name, .alreadyRunning, now: at(0.1)) == [])
        #expect(policy.registered(door, busName: Self.name, now: at(0.2)) == nil, "relinkd did not start it")
        #expect(policy.targets[Self.name]?.phase == .idle)
    }

    @Test func aFailedStartIsRetriedWithABackoffWhileEventsWait() {
        var policy = Policy()
        _ = policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: at(0))
        let failed = policy.startAnswered(Self.name, .failed("org.freedesktop.DBus.Error.Spawn.ChildExited"), now: at(0.1))
        #expect(failed == [.failed(Self.name, why: "org.freedesktop.DBus.Error.Spawn.ChildExited", retryAt: at(0.6)), .timer(Self.name, at: at(0.6))])
        #expect(policy.timerFired(Self.name, now: at(0.5)) == [], "early")
        #expect(policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: at(0.55)) == [], "backing off")
        #expect(policy.timerFired(Self.name, now: at(0.6)) == [.start(LaunchReason(busName: Self.name, identifiers: [door], events: ["value-notified"]))])
        // It starts and never registers: a failure, the backoff doubled.
        _ = policy.startAnswered(Self.name, .started, now: at(0.7))
        let late = policy.timerFired(Self.name, now: at(10.7))
        #expect(late == [.failed(Self.name, why: "the program did not register within 10.0 seconds", retryAt: at(11.7)), .timer(Self.name, at: at(11.7))])
        #expect(policy.targets[Self.name]?.lastFailure == "the program did not register within 10.0 seconds")
    }

    @Test func aCrashLoopIsStartedAtMostTheBurstInTheWindowThenOnTheNextEventAfterIt() {
        var policy = Policy()
        var now = at(0)
        var starts: [ManualClock.Instant] = []
        var actions = policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: now)
        var limited: ManualClock.Instant?
        // Each start exits at once; relinkd retries when its timer fires.
        while limited == nil, now < at(60) {
            for action in actions {
                switch action {
                case .start: starts.append(now)
                case .limitReached(_, let count, let until): #expect(count == 5); limited = until
                default: break
                }
            }
            if case .starting? = policy.targets[Self.name]?.phase {
                now = now.advanced(by: .milliseconds(50))
                actions = policy.startAnswered(Self.name, .failed("exited"), now: now)
            } else if case .backingOff(let until)? = policy.targets[Self.name]?.phase {
                now = until
                actions = policy.timerFired(Self.name, now: now)
            } else {
                actions = []
                if limited == nil { break }
            }
        }
        #expect(starts == [at(0), at(0.55), at(1.6), at(3.65), at(7.7)], "backoff 0.5, 1, 2, 4 s")
        #expect(limited == at(30), "5 starts in 30 s from the first")
        // Events inside the window start nothing; the first one after it does.
        #expect(policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: at(29.9)) == [])
        #expect(policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: at(30)).count == 1)
    }

    @Test func theBackoffIsCappedAtItsMaximum() {
        var policy = Policy(limits: .init(burst: 100, window: .seconds(1000), firstBackoff: .milliseconds(500),
                                          maximumBackoff: .seconds(8), registerTimeout: .seconds(10)))
        var now = at(0)
        _ = policy.eventWaiting(door, kind: "connected", busName: Self.name, now: now)
        var waits: [Duration] = []
        for _ in 0..<7 {
            let actions = policy.startAnswered(Self.name, .failed("exited"), now: now)
            guard case .failed(_, _, let retry?)? = actions.first else { Issue.record("no retry"); return }
            waits.append(now.duration(to: retry))
            now = retry
            _ = policy.timerFired(Self.name, now: now)
        }
        #expect(waits == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
    }

    @Test func aProgramThatComesBackByItselfWhileBackingOffEndsTheFailures() {
        var policy = Policy()
        _ = policy.eventWaiting(door, kind: "connected", busName: Self.name, now: at(0))
        _ = policy.startAnswered(Self.name, .failed("exited"), now: at(0.1))
        #expect(policy.registered(door, busName: Self.name, now: at(0.2)) == nil)
        #expect(policy.targets[Self.name]?.phase == .idle && policy.targets[Self.name]?.failures == 0)
        #expect(policy.timerFired(Self.name, now: at(1)) == [], "its timer is stale")
    }
}

func id(_ value: String) -> RestoreIdentifier {
    do { return try RestoreIdentifier(value) } catch { preconditionFailure("\(error)") }
}

/// Who may have relinkd start a program: the activation file's `User=`.
@Suite("Launch permission")
struct LaunchPermissionTests {
    static let file = """
        # the example lock
        [D-BUS Service]
        Name=org.example.Lock
        Exec=/usr/bin/python3 /opt/lock.py
        User=alice
        SystemdService=example-lock.service
        [Other]
        User=root
        """

    @Test func theActivationFileIsRead() throws {
        let parsed = DBusActivationFile(parsing: Self.file)
        let file = try #require(parsed)
        #expect(file.name == "org.example.Lock" && file.exec == "/usr/bin/python3 /opt/lock.py" && file.user == "alice")
        #expect(file.systemdService == "example-lock.service")
        #expect(DBusActivationFile(parsing: "[D-BUS Service]\nExec=/bin/true\n") == nil, "no Name=")
    }

    @Test func onlyTheUserTheFileNamesOrRootMayHaveItStarted() {
        let file = DBusActivationFile(parsing: Self.file)
        let name = "org.example.Lock"
        #expect(LaunchPermission.decide(busName: name, uid: 1000, userName: "alice", file: file) == .allowed)
        #expect(LaunchPermission.decide(busName: name, uid: 0, userName: "root", file: file) == .allowed)
        #expect(LaunchPermission.decide(busName: name, uid: 0, userName: "root", file: nil) == .allowed)
        guard case .refused(let why) = LaunchPermission.decide(busName: name, uid: 1001, userName: "bob", file: file) else {
            Issue.record("bob may not start alice's program"); return
        }
        #expect(why.contains("alice"))
        let noUser = DBusActivationFile(parsing: "[D-BUS Service]\nName=org.example.Lock\nExec=/bin/true\n")
        #expect(LaunchPermission.decide(busName: name, uid: 1000, userName: "alice", file: noUser) != .allowed, "runs as the bus's user")
        #expect(LaunchPermission.decide(busName: name, uid: 1000, userName: "alice", file: nil) != .allowed, "no file found")
    }
}
