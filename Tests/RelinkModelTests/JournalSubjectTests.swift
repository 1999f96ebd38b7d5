import RelinkModel
import Testing

/// The subject a journal line's text names (issue 21, item 13: "notifications
/// armed" named no device in its text).
@Suite("Journal line subjects")
struct JournalSubjectTests {
    @Test func theTextNamesTheIdentifierTheDeviceAndTheCharacteristic() {
        let fields: [JournalField: String] = [.restoreID: "front-door", .address: "00:00:00:00:00:02",
                                              .peripheral: "62E6654B-88B2-4082-97A4-474CC2399DD2", .characteristic: "180d/2a37"]
        #expect(JournalField.subject(of: "notifications armed") { fields[$0] }
            == "identifier front-door, device 00:00:00:00:00:02, characteristic 180d/2a37")
    }

    @Test func thePeripheralIsNamedOnlyWithoutAnAddressAndNothingIsRepeated() {
        let fields: [JournalField: String] = [.peripheral: "62E6654B-88B2-4082-97A4-474CC2399DD2", .restoreID: "band"]
        #expect(JournalField.subject(of: "event connected") { fields[$0] } == "identifier band, peripheral 62E6654B-88B2-4082-97A4-474CC2399DD2")
        #expect(JournalField.subject(of: "band registered") { fields[$0] } == "peripheral 62E6654B-88B2-4082-97A4-474CC2399DD2")
        #expect(JournalField.subject(of: "relinkd ready") { _ in nil } == nil)
    }
}
