/// Every `org.relink.Error.*` name relink gives out, in one list: the errors
/// relinkd's methods reply (docs/api/errors.md) and the names of failures
/// relink itself detects, which appear as `errorName` in `failed-to-connect`
/// and `disconnected` events beside BlueZ's own names (docs/api/events.md).
///
/// It lives in the model because the pure core, the BlueZ layer and the API
/// contract all name these failures; `RelinkAPI.RelinkError` carries one of
/// the first group (``methodErrors``) with its message.
public enum RelinkErrorName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    // Method errors (docs/api/errors.md).
    /// A malformed argument.
    case invalidArguments = "org.relink.Error.InvalidArguments"
    /// The identifier is not registered, or belongs to another user.
    case unknownIdentifier = "org.relink.Error.UnknownIdentifier"
    /// No such peripheral, intent or subscription.
    case unknownPeripheral = "org.relink.Error.UnknownPeripheral"
    /// The peripheral's GATT database is known and has no such characteristic.
    case unknownCharacteristic = "org.relink.Error.UnknownCharacteristic"
    /// The caller may not do this.
    case notPermitted = "org.relink.Error.NotPermitted"
    /// The intent exists already.
    case alreadyExists = "org.relink.Error.AlreadyExists"
    /// Read or write on a peripheral with no link.
    case notConnected = "org.relink.Error.NotConnected"
    /// The adapter is off or bluetoothd is absent.
    case notReady = "org.relink.Error.NotReady"
    /// BlueZ is busy with the same operation.
    case inProgress = "org.relink.Error.InProgress"
    /// Not supported by the peripheral or BlueZ.
    case notSupported = "org.relink.Error.NotSupported"
    /// The store could not commit; nothing was acknowledged.
    case storeFailed = "org.relink.Error.StoreFailed"
    /// Anything else; the message says what.
    case failed = "org.relink.Error.Failed"
    /// The characteristic is on the link and has no such descriptor.
    case unknownDescriptor = "org.relink.Error.UnknownDescriptor"
    /// The link is up but bluetoothd has not resolved its services yet.
    case servicesNotResolved = "org.relink.Error.ServicesNotResolved"
    /// A write longer than the largest value for its write type on the link.
    case valueTooLong = "org.relink.Error.ValueTooLong"
    /// A write without response that does not fit now (the stream's socket
    /// or queue is full); `ReadyToWrite` follows when it fits again.
    case writeQueueFull = "org.relink.Error.WriteQueueFull"
    /// Peripheral role: no request of that number waits for an answer.
    case unknownRequest = "org.relink.Error.UnknownRequest"
    /// Peripheral role: too many updates on their way; wait for `ready-to-update`.
    case updateQueueFull = "org.relink.Error.UpdateQueueFull"
    /// Relaunch: the bus cannot start that name (it is not among its activatable names).
    case notActivatable = "org.relink.Error.NotActivatable"
    /// The identifier has no transfer of that identifier under way.
    case unknownTransfer = "org.relink.Error.UnknownTransfer"
    /// Pairing failed: the peripheral or bluetoothd rejected, cancelled or
    /// timed out the authentication (`Central1.Pair`).
    case authenticationFailed = "org.relink.Error.AuthenticationFailed"
    /// Peripheral role: the adapter's controller has no advertising
    /// instance left (`StartAdvertising`; bluetoothd's `NotPermitted`
    /// "Maximum advertisements reached").
    case advertisingLimitReached = "org.relink.Error.AdvertisingLimitReached"
    /// The calling user is at one of their per-user bounds (docs/api/errors.md#per-user-bounds).
    case quotaExceeded = "org.relink.Error.QuotaExceeded"

    // Failures relink detects (event reasons only).
    /// A relink step timer or the overall deadline ran out.
    case timeout = "org.relink.Error.Timeout"
    /// A lookup or scan did not find the device.
    case notFound = "org.relink.Error.NotFound"
    /// The client cancelled the intent.
    case cancelled = "org.relink.Error.Cancelled"
    /// bluetoothd left the bus.
    case bluetoothdRestarted = "org.relink.Error.BluetoothdRestarted"
    /// The adapter was powered off.
    case adapterOff = "org.relink.Error.AdapterOff"
    /// An established link went down.
    case linkLost = "org.relink.Error.LinkLost"
    /// The link went down before it was fully up.
    case disconnected = "org.relink.Error.Disconnected"
    /// relinkd stopped (or was killed) during a transfer that did not ask
    /// to be resumed (`transfer-failed`).
    case interrupted = "org.relink.Error.Interrupted"

    /// The method errors, in the order of docs/api/errors.md.
    public static let methodErrors: [RelinkErrorName] = [
        .invalidArguments, .unknownIdentifier, .unknownPeripheral, .unknownCharacteristic, .notPermitted, .alreadyExists, .notConnected,
        .notReady, .inProgress, .notSupported, .storeFailed, .failed, .unknownDescriptor, .servicesNotResolved, .valueTooLong, .writeQueueFull,
        .unknownRequest, .updateQueueFull, .notActivatable, .unknownTransfer, .authenticationFailed, .advertisingLimitReached,
        .quotaExceeded,
    ]

    /// The method error of a D-Bus error name; nil for any other name, an
    /// event-only failure name (`Timeout`, …) included.
    public init?(methodErrorNamed dbusName: String) {
        guard let name = RelinkErrorName(rawValue: dbusName), name.isMethodError else { return nil }
        self = name
    }

    /// Whether a method may reply this name (it is in ``methodErrors``).
    public var isMethodError: Bool { Self.methodErrors.contains(self) }

    /// The full D-Bus error name.
    public var description: String { rawValue }
}
