import DBus
import Foundation
import RelinkAPI
import RelinkClient
import RelinkModel
import Testing

/// The client's side of issue 22 item 5: the largest value per write type
/// (`Peripheral1`, `connected`) and a write stream's properties and errors.
@Suite struct WriteLimitsClientTests {
    static let id = "6b1f2c3d-0000-4abc-8def-0123456789ab"

    @Test func maximumWriteValueLengthComesFromThePeripheralsProperties() throws {
        let p = try RelinkPeripheral(object: "/org/relink/peripheral/x", properties: [
            "Id": .string(Self.id), "Connected": .boolean(true), "MTU": .uint16(247),
            "MaximumWriteWithResponse": .uint16(512), "MaximumWriteWithoutResponse": .uint16(244),
        ])
        #expect(p.mtu == 247)
        #expect(p.maximumWriteValueLength(for: .withResponse) == 512)
        #expect(p.maximumWriteValueLength(for: .withoutResponse) == 244)
        // An older relinkd (no such properties), or no link: 0, as documented.
        let old = try RelinkPeripheral(object: "/x", properties: ["Id": .string(Self.id)])
        #expect(RelinkWriteType.allCases.map { old.maximumWriteValueLength(for: $0) } == [0, 0] && old.mtu == 0)
        #expect(throws: RelinkClientError.self) { try RelinkPeripheral(object: "/x", properties: ["Id": .string(Self.id), "MTU": .uint32(247)]) }
    }

    @Test func connectedEventsCarryTheWriteLimitsWhenKnown() throws {
        let base = #"{"connected":{"address":{"address":"00:00:00:00:00:02","type":"public"},"peripheral":{"uuid":"6B1F2C3D-0000-4ABC-8DEF-0123456789AB"},"route":"scan""#
        let known = RelinkClientEvent(sequence: 1, kind: "connected",
                                      payloadJSON: base + #","mtu":185,"maximumWriteWithResponse":512,"maximumWriteWithoutResponse":182}}"#)
        #expect(known.writeLimits == WriteLimits(mtu: 185))
        #expect(known.writeLimits?.withoutResponse == 182)
        let unknown = RelinkClientEvent(sequence: 2, kind: "connected", payloadJSON: base + "}}")
        #expect(unknown.payload != nil && unknown.writeLimits == nil, "a connected without them (older relinkd, unknown MTU) still decodes")
        let restored = RelinkClientEvent(sequence: 3, kind: "restored",
                                         payloadJSON: base.replacingOccurrences(of: "connected", with: "restored") + #","mtu":23}}"#)
        #expect(restored.writeLimits?.withoutResponse == 20)
    }

    @Test func writeStreamPropertiesDecode() throws {
        let s = try RelinkWriteStreamProperties([
            "Peripheral": .string(Self.id), "Service": .string("0000180d-0000-1000-8000-00805f9b34fb"),
            "Characteristic": .string("00002a39-0000-1000-8000-00805f9b34fb"), "MaximumLength": .uint16(97), "Transport": .string("acquired"),
        ])
        #expect(s.maximumLength == 97 && s.transport == "acquired" && s.peripheral == Self.id)
        #expect(throws: RelinkClientError.self) { try RelinkWriteStreamProperties(["MaximumLength": .uint16(97)]) }
        #expect(throws: RelinkClientError.self) { try RelinkWriteStreamProperties(["Peripheral": .string(Self.id), "MaximumLength": .string("97")]) }
    }

    @Test func theStreamsErrorsAreTypedByTheirRelinkdNames() {
        #expect(RelinkClientError.Name(.writeQueueFull).rawValue == "org.relink.Error.WriteQueueFull")
        #expect(RelinkClientError.Name(.valueTooLong).rawValue == "org.relink.Error.ValueTooLong")
        let refused = RelinkClientError(.writeQueueFull, "does not fit now")
        #expect(refused.code == .writeQueueFull && !refused.isUnreachable)
    }
}
