import RelinkAPI

/// What became of the bond after ``RelinkManager/cancel(_:peripheral:removeBond:)``
/// (`Central1.CancelWith`).
public struct RelinkBondRemoval: Sendable, Hashable {
    /// Whether relinkd removed bluetoothd's bond.
    public var removed: Bool
    /// Why it stayed (another identifier still uses the peripheral, it was
    /// not paired); empty when it was removed or not asked for.
    public var reason: String
}

extension RelinkManager {
    /// `Central1.CancelWith`: ends the intent and the identifier's
    /// subscriptions on the peripheral as ``cancel(_:peripheral:)`` does,
    /// and with `removeBond` removes bluetoothd's bond when no identifier
    /// uses the peripheral any more (else keeps it and says why).
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `StoreFailed`,
    ///   `NotReady`, `Failed`; unreachable.
    public func cancel(_ identifier: String, peripheral: String, removeBond: Bool) async throws(RelinkClientError) -> RelinkBondRemoval {
        let reply = try await central(identifier, Central1Member.cancelWith.rawValue, [
            .string(try RelinkArguments.peripheral(peripheral)),
            .dictionary(key: .string, value: .variant, [.init(.string("remove_bond"), .variant(.boolean(removeBond)))]),
        ])
        let (removed, reason) = try decode(reply, "CancelWith", Bool.self, String.self)
        return RelinkBondRemoval(removed: removed, reason: reason)
    }
}

extension RelinkCentral {
    /// ``RelinkManager/cancel(_:peripheral:removeBond:)`` on this central's identifier.
    /// - Throws: ``RelinkClientError``: as that method, and `NotConnected`; unreachable.
    public func cancel(peripheral: String, removeBond: Bool) async throws(RelinkClientError) -> RelinkBondRemoval {
        try await connected().cancel(restoreIdentifier, peripheral: peripheral, removeBond: removeBond)
    }
}
