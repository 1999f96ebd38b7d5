import Testing
@testable import Systemd

struct RelinkMessageIDTests {
    @Test func idsAreDistinct128BitHex() {
        let ids = RelinkMessageID.allCases.map(\.id)
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(id)")
        }
    }

    @Test func eventNamesAreKebabCase() {
        #expect(RelinkMessageID.reconnectGaveUp.eventName == "reconnect-gave-up")
        #expect(RelinkMessageID.started.eventName == "started")
        #expect(RelinkMessageID.connectFailed.metadata == [
            "MESSAGE_ID": "2fdf5244b34f436eace2b7290ba4e3bd", "RELINK_EVENT": "connect-failed",
        ])
    }
}
