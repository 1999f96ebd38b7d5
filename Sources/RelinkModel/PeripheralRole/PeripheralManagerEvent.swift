/// An event of an identifier's peripheral role (CoreBluetooth's
/// `CBPeripheralManagerDelegate` callbacks): a remote central's request, a
/// subscription, or room for updates. It travels in the identifier's one
/// event stream, numbered and stored like every other event.
public enum PeripheralManagerEvent: Sendable, Hashable, Codable {
    /// A central reads a characteristic relinkd cannot answer itself
    /// (`didReceiveRead`): answer with `Respond` or `RespondWithError`
    /// within the answer bound. `mtu` is the ATT MTU of the central's link
    /// as bluetoothd passed it with the request (nil when it did not).
    case readRequest(request: UInt64, central: String, characteristic: CharacteristicKey, offset: Int, mtu: Int? = nil)
    /// A central wrote a characteristic (`didReceiveWrite`). When
    /// `request` is nonzero, the central waits for `Respond` (or
    /// `RespondWithError`); zero means relinkd already answered it (a write
    /// without response, or a write that came while no client was attached:
    /// committed to the store before the central got its response). `kind`
    /// is how the central wrote (``WriteKind``); `mtu` as in ``readRequest``.
    case writeRequest(request: UInt64, central: String, characteristic: CharacteristicKey, offset: Int, value: [UInt8], kind: WriteKind, mtu: Int? = nil)
    /// A central subscribed to a characteristic (`didSubscribeTo`).
    case subscribed(central: String, characteristic: CharacteristicKey)
    /// A central unsubscribed (`didUnsubscribeFrom`).
    case unsubscribed(central: String, characteristic: CharacteristicKey)
    /// An update refused for want of room may be sent again
    /// (`peripheralManagerIsReadyToUpdateSubscribers`).
    case readyToUpdate

    /// The event's kind (`read-request`, ...).
    public var kind: EventKind {
        switch self {
        case .readRequest: .readRequest
        case .writeRequest: .writeRequest
        case .subscribed: .subscribed
        case .unsubscribed: .unsubscribed
        case .readyToUpdate: .readyToUpdate
        }
    }

    /// The kind's wire name (``EventKind``).
    public var name: String { kind.rawValue }
}
