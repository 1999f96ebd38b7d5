extension RelinkNames {
    /// The peripheral role's interface, on each restore identifier's object
    /// beside `Central1` (docs/api/PeripheralManager1.md).
    public static let peripheralManager = "org.relink.PeripheralManager1"
}

/// Members of `org.relink.PeripheralManager1` (docs/api/PeripheralManager1.md).
public enum PeripheralManager1Member: String, Sendable, CaseIterable {
    /// `AddService(s service)`: publishes a service (its JSON).
    case addService = "AddService"
    /// `RemoveService(s uuid)`.
    case removeService = "RemoveService"
    /// `RemoveAllServices()`.
    case removeAllServices = "RemoveAllServices"
    /// `StartAdvertising(s advertisement)`: advertises (its JSON), replacing what was advertised.
    case startAdvertising = "StartAdvertising"
    /// `StopAdvertising()`.
    case stopAdvertising = "StopAdvertising"
    /// `Respond(t request, ay value)`: answers a read (its value) or a write (the value is ignored).
    case respond = "Respond"
    /// `RespondWithError(t request, s error)`: answers a request with an ATT error.
    case respondWithError = "RespondWithError"
    /// `UpdateValue(s service, s characteristic, ay value)`: notifies subscribed centrals.
    case updateValue = "UpdateValue"
    /// `UpdateValues(s service, s characteristic, aay values) -> u accepted`:
    /// several updates of one characteristic in one call, in order.
    case updateValues = "UpdateValues"
    /// `State() -> s`: the peripheral role's state as JSON.
    case state = "State"
}
