import DBus
import RelinkAPI
import RelinkModel

// Central1's pairing method (docs/api/Central1.md, `Pair`).
extension APIInterfaces {
    /// `Pair`, `Unpair` and `CancelWith` of one identifier.
    func pairingMethods(_ id: RestoreIdentifier) -> [DBusMethod] {
        let daemon = self.daemon, identity = self.identity
        return [
            // The turn ends once the target is found: the pairing may wait
            // for the caller's AnswerPairing.
            DBusMethod(Central1Member.pair.rawValue, in: [DBusArgument("peripheral", .string)], out: [], ordered: true) { call in
                let ref = try ControlArguments(call, count: 1).peripheral(0)
                try await daemon.pair(id, ref, from: try await identity.caller(of: call), started: call.endTurn)
                return []
            },
            DBusMethod(Central1Member.unpair.rawValue, in: [DBusArgument("peripheral", .string)], out: [], ordered: true) { call in
                let ref = try ControlArguments(call, count: 1).peripheral(0)
                try await daemon.unpair(id, ref, from: try await identity.caller(of: call))
                return []
            },
            DBusMethod(Central1Member.cancelWith.rawValue, in: [DBusArgument("peripheral", .string), DBusArgument("options", Self.optionsType)],
                       out: [DBusArgument("bond_removed", .boolean), DBusArgument("reason", .string)], ordered: true) { call in
                let a = try ControlArguments(call, count: 2)
                let ref = try a.peripheral(0)
                var removeBond = false
                if case .boolean(let b)? = try a.options(1, allowed: ["remove_bond": .boolean])["remove_bond"] { removeBond = b }
                let outcome = try await daemon.cancelWith(id, ref, removeBond: removeBond, from: try await identity.caller(of: call))
                return [.boolean(outcome.removed), .string(outcome.reason)]
            },
        ]
    }
}
