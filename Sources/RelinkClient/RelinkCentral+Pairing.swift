// Pairing with a passkey or numeric comparison from a RelinkCentral
// (docs/api/Central1.md, "Pairing requests").
extension RelinkCentral {
    /// `Central1.PairWith` on this central's identifier (attached by
    /// ``connect(options:)``), each `pairing-request` answered by
    /// `handler`; the events also reach ``events`` as usual.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `NotConnected`, `InProgress`, `NotReady`, `AuthenticationFailed`, `Failed`; unreachable.
    public func pair(peripheral: String, capability: String,
                     answering handler: @escaping @Sendable (RelinkPairingRequest) async -> RelinkPairingAnswer) async throws(RelinkClientError) {
        try await connected().pair(restoreIdentifier, peripheral: peripheral, capability: capability, watch: false, answering: handler)
    }
}
