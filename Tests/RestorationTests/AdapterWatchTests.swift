import RelinkModel
import Restoration
import Testing

@Suite("Adapter state announcements")
struct AdapterWatchTests {
    static let on = AdapterStatus(.poweredOn, roles: [.central, .peripheral, .centralPeripheral])
    static let off = AdapterStatus(.poweredOff, roles: [.central, .peripheral, .centralPeripheral])

    @Test func aRestartWithTheAdapterAsLastAnnouncedAnnouncesNothing() {
        var watch = AdapterWatch()
        #expect(watch.start(Self.on, lastAnnounced: Self.on) == nil)
        #expect(watch.current == Self.on)
    }

    @Test func aRestartThatFindsItChangedOrNothingStoredAnnouncesIt() {
        var changed = AdapterWatch()
        #expect(changed.start(Self.off, lastAnnounced: Self.on) == .init(status: Self.off, previous: Self.on))
        var first = AdapterWatch()
        #expect(first.start(Self.on, lastAnnounced: nil) == .init(status: Self.on, previous: nil))
        var roles = AdapterWatch()
        #expect(roles.start(Self.on, lastAnnounced: AdapterStatus(.poweredOn, roles: [.central])) != nil, "other roles: another adapter")
    }

    @Test func eachChangeWhileRunningIsAnnouncedOnceWithTheOneBefore() {
        var watch = AdapterWatch()
        _ = watch.start(Self.on, lastAnnounced: Self.on)
        #expect(watch.observe(Self.on) == nil, "unchanged")
        #expect(watch.observe(Self.off) == .init(status: Self.off, previous: Self.on))
        #expect(watch.observe(Self.off) == nil)
        #expect(watch.observe(AdapterStatus(.bluetoothdMissing)) == .init(status: AdapterStatus(.bluetoothdMissing), previous: Self.off))
        #expect(watch.observe(Self.on) == .init(status: Self.on, previous: AdapterStatus(.bluetoothdMissing)))
        #expect(watch.current == Self.on)
    }
}
