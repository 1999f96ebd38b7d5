import BlueZ
import DBus
import RelinkAPI
import RelinkModel

// Central1's `PairWith` and `AnswerPairing` (docs/api/Central1.md,
// "Pairing requests").
extension APIInterfaces {
    /// `PairWith` and `AnswerPairing` of one identifier.
    func pairingRequestMethods(_ id: RestoreIdentifier) -> [DBusMethod] {
        let daemon = self.daemon, identity = self.identity
        return [
            DBusMethod(Central1Member.pairWith.rawValue, in: [DBusArgument("peripheral", .string), DBusArgument("capability", .string)], out: [],
                       ordered: true) { call in
                let a = try ControlArguments(call, count: 2)
                let ref = try a.peripheral(0)
                guard let capability = AgentCapability(rawValue: try a.string(1, "capability")) else {
                    throw RelinkError(.invalidArguments, "capability must be one of \(AgentCapability.names)")
                }
                try await daemon.pair(id, ref, capability: capability, from: try await identity.caller(of: call), started: call.endTurn)
                return []
            },
            DBusMethod(Central1Member.answerPairing.rawValue,
                       in: [DBusArgument("request", .uint64), DBusArgument("accept", .boolean), DBusArgument("passkey", .uint32)], out: [],
                       ordered: true) { call in
                let a = try ControlArguments(call, count: 3)
                let number = UInt64(try a.uint64(0, "request"))
                guard case .boolean(let accept) = a.values[1] else { throw RelinkError(.invalidArguments, "accept must be a boolean (b)") }
                let passkey = try a.uint32(2, "passkey")
                let request = APIRequest.answerPairing(id, number, accept: accept, passkey: passkey)
                _ = try await daemon.submit(request, from: try await identity.caller(of: call), queued: call.endTurn).get()
                return []
            },
        ]
    }
}
