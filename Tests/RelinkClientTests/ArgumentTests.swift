import DBus
import RelinkClient
import Testing

@Suite struct ArgumentTests {
    func name(_ body: () throws -> Void) -> RelinkClientError.Name? {
        do { try body(); return nil } catch { return (error as? RelinkClientError)?.name ?? .init("not a RelinkClientError") }
    }

    @Test func bluetoothUUIDsAreNormalisedTo128BitLowercase() throws {
        #expect(try RelinkArguments.bluetoothUUID("180D") == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(try RelinkArguments.bluetoothUUID("8E7F1A00-4B2C-4D1E-9A3F-72656C696E6B") == "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b")
        for bad in ["", "xyz", "180", "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6", "8e7f1a00_4b2c_4d1e_9a3f_72656c696e6b"] {
            #expect(name { _ = try RelinkArguments.bluetoothUUID(bad) } == .invalidArguments, "\(bad)")
        }
        #expect(name { _ = try RelinkArguments.bluetoothUUIDs(Array(repeating: "180d", count: 65)) } == .invalidArguments)
        #expect(try RelinkArguments.bluetoothUUIDs(Array(repeating: "180d", count: 64)).count == 64)
    }

    @Test func peripheralIsAnAddressOrAUUID() throws {
        #expect(try RelinkArguments.peripheral("aa:bb:cc:dd:ee:0f") == "AA:BB:CC:DD:EE:0F")
        #expect(try RelinkArguments.peripheral("6B1F2C3D-0000-4ABC-8DEF-0123456789AB") == "6b1f2c3d-0000-4abc-8def-0123456789ab")
        for bad in ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:GG", "lock", "6B1F2C3D00004ABC8DEF0123456789AB"] {
            #expect(name { _ = try RelinkArguments.peripheral(bad) } == .invalidArguments, "\(bad)")
        }
    }

    @Test func hexParsesCommonSpellingsAndRejectsOthers() throws {
        #expect(try RelinkArguments.hexBytes("01ff") == [0x01, 0xFF])
        #expect(try RelinkArguments.hexBytes("0x01FF") == [0x01, 0xFF])
        #expect(try RelinkArguments.hexBytes("01:ff 7a") == [0x01, 0xFF, 0x7A])
        #expect(try RelinkArguments.hexBytes("") == [])
        #expect(name { _ = try RelinkArguments.hexBytes("0") } == .invalidArguments)
        #expect(name { _ = try RelinkArguments.hexBytes("zz") } == .invalidArguments)
        #expect(RelinkArguments.hex([0x00, 0x0A, 0xFF]) == "000aff")
    }

    @Test func valuesOver512BytesAreRejected() throws {
        try RelinkArguments.checkValue(Array(repeating: 1, count: 512))
        #expect(name { try RelinkArguments.checkValue(Array(repeating: 1, count: 513)) } == .invalidArguments)
    }

    @Test func connectOptionsAreValidatedAndEncoded() throws {
        #expect(try RelinkConnectOptions().dictionary().isEmpty)
        let full = try RelinkConnectOptions(timeout: 2.5, pendingUntilCancelled: false, services: ["180d"],
                                            strategies: [.scan, .knownIdentifier], addressType: .random).dictionary()
        #expect(full["timeout"] == .double(2.5))
        #expect(full["pending_until_cancelled"] == .boolean(false))
        #expect(full["services"] == .array(.string, [.string("0000180d-0000-1000-8000-00805f9b34fb")]))
        #expect(full["strategies"] == .array(.string, [.string("scan"), .string("known-identifier")]))
        #expect(full["address_type"] == .string("random"))
        #expect(try RelinkConnectOptions(timeout: 86_400).dictionary()["timeout"] == .double(86_400))
        var noPairing = RelinkConnectOptions()
        noPairing.pairOnDemand = false
        #expect(try noPairing.dictionary() == ["pair_on_demand": .boolean(false)], "pair_on_demand only when asked")
        var passkey = RelinkConnectOptions()
        passkey.pairingCapability = .keyboardDisplay
        #expect(try passkey.dictionary() == ["pairing_capability": .string("KeyboardDisplay")], "BlueZ's name, only when asked")
        #expect(name { _ = try RelinkConnectOptions(timeout: 5, pendingUntilCancelled: true).dictionary() } == .invalidArguments)
        for timeout in [0, -1, 86_400.5, Double.nan, .infinity] {
            #expect(name { _ = try RelinkConnectOptions(timeout: timeout).dictionary() } == .invalidArguments, "\(timeout)")
        }
        #expect(name { _ = try RelinkConnectOptions(strategies: [.scan, .scan]).dictionary() } == .invalidArguments)
        #expect(name { _ = try RelinkConnectOptions(services: ["nope"]).dictionary() } == .invalidArguments)
        let match = try RelinkConnectOptions(matchName: "Lock-7", matchManufacturerID: 0x0059, matchServices: ["180d"]).dictionary()
        #expect(match["match_name"] == .string("Lock-7"))
        #expect(match["match_manufacturer_id"] == .uint16(0x0059))
        #expect(match["match_services"] == .array(.string, [.string("0000180d-0000-1000-8000-00805f9b34fb")]))
        #expect(name { _ = try RelinkConnectOptions(matchName: "").dictionary() } == .invalidArguments)
        #expect(name { _ = try RelinkConnectOptions(matchName: String(repeating: "é", count: 125)).dictionary() } == .invalidArguments)
        #expect(name { _ = try RelinkConnectOptions(matchServices: ["nope"]).dictionary() } == .invalidArguments)
    }

    @Test func errorNamesTellUnreachableFromReplies() {
        #expect(RelinkClientError(.init("org.freedesktop.DBus.Error.ServiceUnknown"), "").isUnreachable)
        #expect(RelinkClientError(.init("org.freedesktop.DBus.Error.NoReply"), "").isUnreachable)
        #expect(RelinkClientError(.init("org.freedesktop.DBus.Error.Spawn.ExecFailed"), "").isUnreachable)
        #expect(!RelinkClientError(.unknownIdentifier, "").isUnreachable)
        #expect(RelinkClientError(.unknownIdentifier, "").isUnknownObject)
        #expect(RelinkClientError(.unknownPeripheral, "").isUnknownObject)
        #expect(!RelinkClientError(.invalidArguments, "").isUnknownObject)
        #expect(RelinkClientError(.notReady, "Adapter is off.").description == "org.relink.Error.NotReady: Adapter is off.")
    }
}
