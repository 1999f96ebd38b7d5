import Testing
@testable import Restoration
import RelinkModel

/// Links that go down as soon as they are up (real bluetoothd, difference
/// 37: each link to a lock that had forgotten the central drew a failed
/// pairing and dropped about 0.5 s later; relinkd reconnected at once, about
/// 530 times in 4 minutes). The first short link reconnects at once, as any
/// lost link; from the second in a row the machine backs off along the
/// transient list with nothing armed; a link that lasted resets the count.
@Suite("Short links")
struct ShortLinkTests {
    /// Connects (the world answers the lookup and the connect), keeps the
    /// link up for `up`, then drops it; returns the actions of the drop.
    @discardableResult
    static func link(_ driver: inout Driver, up: Duration) -> [Action] {
        driver.send { $0.servicesResolved(Fixtures.lockAddress) }
        driver.advance(by: up)
        return driver.send { $0.disconnected(Fixtures.lockAddress) }
    }

    static func connecting(_ driver: Driver) -> Bool {
        if case .connecting = driver.state { true } else { false }
    }

    static func driver() -> Driver {
        var driver = Driver(options: Fixtures.options(strategies: [.knownIdentifier]))
        driver.world = { action in
            if case .lookUpKnownDevice = action { return { $0.knownDeviceLookup(found: true) } }
            return nil
        }
        driver.send { $0.start() }
        return driver
    }

    @Test func fromTheSecondShortLinkInARowTheMachineBacksOffWithNothingArmed() {
        var driver = Self.driver()
        #expect(Self.connecting(driver))
        let first = Self.link(&driver, up: .milliseconds(500))
        #expect(Self.connecting(driver), "the first short link reconnects at once: \(driver.state)")
        #expect(first.contains { if case .connect = $0 { true } else { false } })
        var waits: [Duration] = []
        for _ in 0 ..< 3 {
            let drop = Self.link(&driver, up: .milliseconds(500))
            guard case .backingOff(let until, let background) = driver.state else {
                Issue.record("a short link again must back off, not \(driver.state)")
                return
            }
            #expect(background == .none, "nothing armed while backing off")
            #expect(!drop.contains { if case .connect = $0 { true } else { false } }, "no connect at once")
            #expect(!drop.contains { if case .useBackgroundAutoConnect = $0 { true } else { false } })
            waits.append(driver.clock.now.duration(to: until))
            driver.finishBackoff()
            #expect(Self.connecting(driver), "the next round after the backoff")
        }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4)], "the transient list")
        #expect(driver.machine.consecutiveShortLinks == 4)
    }

    @Test func aLinkThatLastedResetsTheCountAndReconnectsAtOnce() {
        var driver = Self.driver()
        Self.link(&driver, up: .milliseconds(200))
        Self.link(&driver, up: .milliseconds(200))
        #expect(driver.machine.consecutiveShortLinks == 2)
        driver.finishBackoff()
        Self.link(&driver, up: ConnectionStateMachine<ManualClock>.shortLinkLimit + .seconds(1))
        #expect(driver.machine.consecutiveShortLinks == 0)
        #expect(Self.connecting(driver), "a lasting link lost reconnects at once: \(driver.state)")
        Self.link(&driver, up: .milliseconds(200))
        #expect(Self.connecting(driver), "one short link after a lasting one reconnects at once: \(driver.state)")
    }
}

/// Short links that worked (issue 31's regression 1): a device at the edge of
/// range, or a lock that sends its state and leaves, makes links that last
/// seconds but carry values. They are reconnected at once however many come
/// in a row; only links that carried nothing count towards the back-off.
@Suite("Short links that carried something")
struct ShortLinksThatWorkedTests {
    @Test func shortLinksThatCarriedAValueReconnectAtOnceEveryTime() {
        var driver = ShortLinkTests.driver()
        for cycle in 1 ... 12 {
            driver.send { $0.servicesResolved(Fixtures.lockAddress) }
            driver.send { $0.linkCarried() }
            driver.advance(by: .milliseconds(700))
            let drop = driver.send { $0.disconnected(Fixtures.lockAddress) }
            #expect(ShortLinkTests.connecting(driver), "cycle \(cycle): a link that carried a value reconnects at once: \(driver.state)")
            #expect(drop.contains { if case .connect = $0 { true } else { false } })
            #expect(driver.machine.consecutiveShortLinks == 0)
        }
    }

    @Test func aCarriedLinkBetweenEmptyOnesResetsTheCount() {
        var driver = ShortLinkTests.driver()
        ShortLinkTests.link(&driver, up: .milliseconds(300))
        #expect(driver.machine.consecutiveShortLinks == 1)
        driver.send { $0.servicesResolved(Fixtures.lockAddress) }
        driver.send { $0.linkCarried() }
        driver.send { $0.disconnected(Fixtures.lockAddress) }
        #expect(driver.machine.consecutiveShortLinks == 0)
        ShortLinkTests.link(&driver, up: .milliseconds(300))
        #expect(ShortLinkTests.connecting(driver), "one empty short link after a carried one reconnects at once: \(driver.state)")
    }

    @Test func whatALinkCarriedIsForgottenWhenTheNextOneComesUp() {
        var driver = ShortLinkTests.driver()
        driver.send { $0.servicesResolved(Fixtures.lockAddress) }
        driver.send { $0.linkCarried() }
        driver.send { $0.disconnected(Fixtures.lockAddress) }
        // Two empty short links after it: the second backs off.
        ShortLinkTests.link(&driver, up: .milliseconds(300))
        ShortLinkTests.link(&driver, up: .milliseconds(300))
        guard case .backingOff = driver.state else {
            Issue.record("empty short links after a carried one must still back off: \(driver.state)")
            return
        }
    }

    @Test func linkCarriedBeforeTheLinkIsUpIsIgnored() {
        var driver = ShortLinkTests.driver()
        driver.send { $0.linkCarried() }   // connecting: no link yet
        ShortLinkTests.link(&driver, up: .milliseconds(300))
        ShortLinkTests.link(&driver, up: .milliseconds(300))
        guard case .backingOff = driver.state else {
            Issue.record("a carried mark before the link must not count: \(driver.state)")
            return
        }
    }

    @Test func aLinkLostToABluetoothdRestartLeavesTheCountAsItIs() {
        var driver = ShortLinkTests.driver()
        ShortLinkTests.link(&driver, up: .milliseconds(300))
        #expect(driver.machine.consecutiveShortLinks == 1)
        driver.send { $0.servicesResolved(Fixtures.lockAddress) }
        driver.send { $0.bluetoothdRestarted() }
        #expect(driver.machine.consecutiveShortLinks == 1, "bluetoothd's restart says nothing of the peripheral")
    }
}

/// bluetoothd's own word on why a link ended (BlueZ 5.83 and later,
/// `Device1.Disconnected`): it decides over what the link carried.
@Suite("Short links with bluetoothd's cause")
struct ShortLinkCauseTests {
    static func drop(_ driver: inout Driver, carried: Bool, cause: LinkEndCause?) {
        driver.send { $0.servicesResolved(Fixtures.lockAddress) }
        if carried { driver.send { $0.linkCarried() } }
        driver.advance(by: .milliseconds(400))
        driver.send { $0.disconnected(Fixtures.lockAddress, cause: cause) }
    }

    @Test func aSupervisionTimeoutIsALinkThatLeftEvenWhenItCarriedNothing() {
        var driver = ShortLinkTests.driver()
        for _ in 0 ..< 6 {
            Self.drop(&driver, carried: false, cause: .timeout)
            #expect(ShortLinkTests.connecting(driver), "out of range: reconnect at once: \(driver.state)")
        }
        #expect(driver.machine.consecutiveShortLinks == 0)
    }

    @Test func anAuthenticationFailureIsAShortLinkEvenWhenItCarriedValues() {
        var driver = ShortLinkTests.driver()
        Self.drop(&driver, carried: true, cause: .authentication)
        #expect(ShortLinkTests.connecting(driver), "the first reconnects at once")
        Self.drop(&driver, carried: true, cause: .authentication)
        guard case .backingOff = driver.state else {
            Issue.record("a second authentication failure in a row must back off: \(driver.state)")
            return
        }
    }

    @Test func aLinkThisHostEndedLeavesTheCount() {
        var driver = ShortLinkTests.driver()
        Self.drop(&driver, carried: false, cause: nil)
        #expect(driver.machine.consecutiveShortLinks == 1)
        Self.drop(&driver, carried: false, cause: .local)
        #expect(driver.machine.consecutiveShortLinks == 1)
        Self.drop(&driver, carried: true, cause: .remote)
        #expect(driver.machine.consecutiveShortLinks == 0, "a remote end after values: a link that worked")
    }
}
