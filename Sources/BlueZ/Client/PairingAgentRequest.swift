public import DBus

/// A request bluetoothd makes of an agent during a pairing.
public enum AgentRequest: Sendable, Hashable {
    /// `RequestPinCode`: a legacy PIN to type.
    case pinCode
    /// `RequestPasskey`: the 6-digit passkey the peripheral shows, to type.
    case passkey
    /// `DisplayPasskey`: a passkey to show, for the peripheral's user to type.
    case displayPasskey(UInt32)
    /// `RequestConfirmation`: numeric comparison: does the peripheral show this passkey?
    case confirmation(UInt32)
    /// `RequestAuthorization`: may this pairing (Just Works) go on?
    case authorization

    /// The request's wire name (the `kind` of relinkd's `pairing-request` event).
    public var kind: String {
        switch self {
        case .pinCode: "pin-code"
        case .passkey: "passkey"
        case .displayPasskey: "display-passkey"
        case .confirmation: "confirmation"
        case .authorization: "authorization"
        }
    }

    /// The passkey shown with the request, if it has one.
    public var shownPasskey: UInt32? {
        switch self {
        case .displayPasskey(let p), .confirmation(let p): p
        case .pinCode, .passkey, .authorization: nil
        }
    }
}

/// An agent's answer to an ``AgentRequest``.
public enum AgentAnswer: Sendable, Hashable {
    /// Yes (confirmation, authorization, a displayed passkey).
    case accept
    /// The passkey typed (``AgentRequest/passkey``).
    case passkey(UInt32)
    /// The PIN typed (``AgentRequest/pinCode``).
    case pinCode(String)
    /// No: `org.bluez.Error.Rejected`.
    case reject
    /// Nobody answered: `org.bluez.Error.Canceled`.
    case cancel
}

/// Who answers the agent's requests: the device asked about and the request.
public typealias AgentRequestHandler = @Sendable (ObjectPath, AgentRequest) async -> AgentAnswer
