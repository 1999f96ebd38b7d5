import DBus
import RelinkAPI
import RelinkModel

/// A `pairing-request` event: relinkd's agent asks the identifier's client
/// about a pairing started with `PairWith` (docs/api/Central1.md, "Pairing requests").
public struct RelinkPairingRequest: Sendable, Hashable {
    /// The number `AnswerPairing` takes.
    public var request: UInt64
    /// The peripheral's relink UUID.
    public var peripheral: String
    /// `confirmation`, `passkey`, `display-passkey`, `authorization` or `pin-code`.
    public var kind: String
    /// The passkey to compare (`confirmation`) or show (`display-passkey`).
    public var passkey: UInt32?

    /// The request an event carries, if it is a `pairing-request`.
    public init?(_ event: RelinkClientEvent) {
        guard case .pairingRequest(let peripheral, let request, let kind, let passkey)? = event.payload else { return nil }
        self.request = request
        self.peripheral = peripheral.description
        self.kind = kind
        self.passkey = passkey
    }
}

/// An answer to a ``RelinkPairingRequest``.
public enum RelinkPairingAnswer: Sendable, Hashable {
    /// Yes: the passkeys match, the pairing may go on, the passkey was shown.
    case accept
    /// The passkey (or PIN digits) typed, for a `passkey` or `pin-code` request.
    case passkey(UInt32)
    /// No: the pairing fails (`AuthenticationFailed`).
    case reject
}

extension RelinkManager {
    /// `Central1.PairWith`: pairs through an agent with the I/O
    /// `capability` (`DisplayOnly`, `DisplayYesNo`, `KeyboardOnly`,
    /// `KeyboardDisplay`, `NoInputNoOutput`), whose requests reach the
    /// identifier's attached client as `pairing-request` events.
    /// - Throws: ``RelinkClientError``: as ``pair(_:peripheral:)``.
    public func pairWith(_ identifier: String, peripheral: String, capability: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.pairWith.rawValue,
                              [.string(try RelinkArguments.peripheral(peripheral)), .string(capability)])
    }

    /// `Central1.AnswerPairing`: answers a `pairing-request` event.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownRequest`; unreachable.
    public func answerPairing(_ identifier: String, request: UInt64, _ answer: RelinkPairingAnswer) async throws(RelinkClientError) {
        let (accept, passkey): (Bool, UInt32) = switch answer {
        case .accept: (true, 0)
        case .passkey(let p): (true, p)
        case .reject: (false, 0)
        }
        _ = try await central(identifier, Central1Member.answerPairing.rawValue, [.uint64(request), .boolean(accept), .uint32(passkey)])
    }

    /// `PairWith`, each of its requests answered by `handler`. With
    /// `watch` (a connection not attached by `Register`), the connection
    /// watches the identifier's live events for the pairing's duration.
    /// - Throws: ``RelinkClientError``: as ``pairWith(_:peripheral:capability:)``.
    public func pair(_ identifier: String, peripheral: String, capability: String, watch: Bool = true,
                     answering handler: @escaping @Sendable (RelinkPairingRequest) async -> RelinkPairingAnswer) async throws(RelinkClientError) {
        let path = try APIPath.central(for: identifier).rawValue
        let signals = try await eventSignals()
        defer { signals.cancel() }
        if watch {
            try await self.watch(identifier, after: try await centralProperties(identifier).lastSequence)
        }
        let answering = Task {
            for try await (from, event) in signals where from == path {
                guard let request = RelinkPairingRequest(event) else { continue }
                try? await answerPairing(identifier, request: request.request, await handler(request))
            }
        }
        defer { answering.cancel() }
        try await pairWith(identifier, peripheral: peripheral, capability: capability)
    }
}
