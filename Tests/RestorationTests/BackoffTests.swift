import Testing
@testable import Restoration
import RelinkModel

@Suite("Backoff")
struct BackoffTests {
    /// Runs rounds whose only step (a known-device connect) fails with
    /// `failureClass`, and returns the backoff interval after each.
    func intervals(_ failureClass: FailureClass, rounds: Int, random: any RandomSource = FixedRandom(value: 0.5), jitter: Double = 0) -> [Duration] {
        var driver = Driver(options: Fixtures.options(strategies: [.knownIdentifier], jitter: jitter), random: random)
        driver.world = { action in
            switch action {
            case .lookUpKnownDevice: { $0.knownDeviceLookup(found: true) }
            case .connect: { $0.connectFailed(ConnectionFailure(failureClass, errorName: "test")) }
            default: nil
            }
        }
        driver.send { $0.start() }
        var result: [Duration] = []
        for _ in 0 ..< rounds {
            guard case .backingOff(let until, _) = driver.state else { break }
            let interval = driver.clock.now.duration(to: until)
            result.append(interval)
            driver.advance(by: interval)
        }
        return result
    }

    @Test func transientFailuresFollowTheDocumentedList() {
        let expected: [Duration] = [1, 2, 4, 8, 16, 32, 64, 128, 300, 300, 300].map { .seconds($0) }
        #expect(intervals(.transient, rounds: 11) == expected)
    }

    @Test(arguments: [FailureClass.inProgress, .timeout, .cancelled, .unknown])
    func otherRetryableClassesUseTheTransientList(_ failureClass: FailureClass) {
        #expect(intervals(failureClass, rounds: 3) == [.seconds(1), .seconds(2), .seconds(4)])
    }

    @Test func missingDeviceUsesTheLongerList() {
        var driver = Driver(options: Fixtures.options(strategies: [.knownIdentifier]))
        driver.world = { action in
            if case .lookUpKnownDevice = action { return { $0.knownDeviceLookup(found: false) } }
            return nil
        }
        driver.send { $0.start() }
        var seen: [Duration] = []
        for _ in 0 ..< 9 {
            guard case .backingOff(let until, _) = driver.state else { break }
            seen.append(driver.clock.now.duration(to: until))
            driver.advance(by: driver.clock.now.duration(to: until))
        }
        #expect(seen == [4, 8, 16, 32, 64, 128, 300, 300, 300].map { .seconds($0) })
    }

    @Test func jitterStaysWithinBoundsAndSpreads() {
        let policy = BackoffPolicy()
        var random: any RandomSource = SplitMixRandom(seed: 42)
        var values: Set<Duration> = []
        for round in 1 ... 12 {
            let base = policy.baseInterval(for: .transient, failedRounds: round) ?? .zero
            for _ in 0 ..< 200 {
                guard case .retry(let interval) = policy.decision(for: .transient, failedRounds: round, random: &random) else {
                    Issue.record("transient must retry")
                    return
                }
                #expect(interval >= base * 0.8 && interval <= base * 1.2)
                values.insert(interval)
            }
        }
        #expect(values.count > 1000, "jitter must actually vary the interval")
    }

    @Test func jitterUsesTheInjectedSource() {
        #expect(intervals(.transient, rounds: 1, random: FixedRandom(value: 0), jitter: 0.2) == [.milliseconds(800)])
        #expect(intervals(.transient, rounds: 1, random: FixedRandom(value: 0.5), jitter: 0.2) == [.seconds(1)])
    }

    @Test func aConnectionResetsTheSequence() {
        var driver = Driver(options: Fixtures.options(strategies: [.knownIdentifier]))
        driver.send { $0.start() }
        for _ in 0 ..< 4 {
            driver.send { $0.knownDeviceLookup(found: true) }
            driver.send { $0.connectFailed(ConnectionFailure(.transient, errorName: "x")) }
            driver.finishBackoff()
        }
        #expect(driver.machine.consecutiveFailedRounds == 4)
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.servicesResolved(Fixtures.lockAddress) }
        #expect(driver.machine.consecutiveFailedRounds == 0)
        driver.send { $0.disconnected(Fixtures.lockAddress) }
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.connectFailed(ConnectionFailure(.transient, errorName: "x")) }
        guard case .backingOff(let until, _) = driver.state else {
            Issue.record("expected backing off")
            return
        }
        #expect(driver.clock.now.duration(to: until) == .seconds(1))
    }

    @Test func policyValidationRejectsNonsense() {
        #expect(throws: DomainError.self) { try BackoffPolicy(transient: []).validate() }
        #expect(throws: DomainError.self) { try BackoffPolicy(transient: [.zero]).validate() }
        #expect(throws: DomainError.self) { try BackoffPolicy(jitter: 1).validate() }
        #expect(throws: DomainError.self) { try ConnectionOptions(strategies: []) }
        #expect(throws: DomainError.self) { try ConnectionOptions(strategies: [.scan, .scan]) }
        #expect(throws: DomainError.self) { try ConnectionOptions(deadline: .after(.zero)) }
        #expect(throws: DomainError.self) { try ConnectionOptions(timeouts: StepTimeouts(connect: .seconds(-1))) }
        #expect(throws: DomainError.self) { try ConnectionOptions(timeouts: StepTimeouts(scan: .seconds(86_401))) }
        #expect(throws: DomainError.self) { try BackoffPolicy(transient: [.seconds(86_401)]).validate() }
    }

    @Test func optionsEditedPastValidationDoNotCrash() {
        var options = Fixtures.options()
        options.strategies = []
        options.backoff.jitter = 7
        var driver = Driver(options: options)
        let actions = driver.send { $0.start() }
        guard case .failed(let failure) = driver.state else {
            Issue.record("expected failure, got \(driver.state)")
            return
        }
        #expect(failure.errorName == "org.relink.Error.InvalidArguments")
        #expect(actions.events.count == 1)
        #expect(actions.records.last?.phase == .failed(failure), "the last record written is the failure")
        var random: any RandomSource = FixedRandom(value: 0)
        guard case .retry(let interval) = options.backoff.decision(for: .transient, failedRounds: 1, random: &random) else {
            Issue.record("transient retries")
            return
        }
        #expect(interval > .zero)
    }
}
