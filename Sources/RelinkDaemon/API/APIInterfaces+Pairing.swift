import DBus
import RelinkAPI
import RelinkModel

// Central1's pairing method (docs/api/Central1.md, `Pair`).
extension APIInterfaces {
    /// `Pair` and `Unpair` of one identifier.
    func pairingMethods(_ id: RestoreIdentifier) -> [DBusMethod] {
        let daemon = self.daemon, identity = self.identity
        return [
            DBusMethod(Central1Member.pair.rawValue, in: [DBusArgument("peripheral", .string)], out: []) { call in
                let ref = try ControlArguments(call, count: 1).peripheral(0)
                try await daemon.pair(id, ref, from: try await identity.caller(of: call))
                return []
            },
            DBusMethod(Central1Member.unpair.rawValue, in: [DBusArgument("peripheral", .string)], out: []) { call in
                let ref = try ControlArguments(call, count: 1).peripheral(0)
                try await daemon.unpair(id, ref, from: try await identity.caller(of: call))
                return []
            },
        ]
    }
}
