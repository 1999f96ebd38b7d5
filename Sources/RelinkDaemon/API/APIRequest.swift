import DBus
import Restoration
import RelinkModel
import RelinkAPI

/// A client API call, with every argument validated.
enum APIRequest: Sendable {
    case register(RestoreIdentifier, nameRule: NamePreference?, replay: Bool, eventLimit: Int?)
    case unregister(RestoreIdentifier)
    case listIdentifiers
    case scan(RestoreIdentifier, ScanIntent)
    case stopScan(RestoreIdentifier)
    case connect(RestoreIdentifier, PeripheralRef, ConnectionOptions)
    case cancel(RestoreIdentifier, PeripheralRef)
    case subscribe(RestoreIdentifier, PeripheralRef, CharacteristicKey)
    case unsubscribe(RestoreIdentifier, PeripheralRef, CharacteristicKey)
    /// Resolves the characteristic on the link for a read or write (done
    /// outside the loop).
    case locate(RestoreIdentifier, PeripheralRef, CharacteristicKey)
    /// The live GATT database of a peripheral the identifier has an intent on.
    case gattDatabase(RestoreIdentifier, PeripheralRef)
    /// Resolves a descriptor on the link for a read or write (done outside the loop).
    case locateDescriptor(RestoreIdentifier, PeripheralRef, DescriptorKey, forWriting: Bool)
    case events(RestoreIdentifier, after: Int64, max: Int)
    case ack(RestoreIdentifier, through: Int64)
    case watch(RestoreIdentifier, after: Int64)
    case unwatch(RestoreIdentifier)
    /// A `PeripheralManager1` call.
    case peripheralManager(RestoreIdentifier, PeripheralManagerRequest)
    /// `Manager1.SetLaunch` (or `Register`'s `launch` option), checked off the loop; nil removes it.
    case setLaunch(RestoreIdentifier, LaunchSpec?)
    /// A transfer call (`StartTransfer`, `Transfers`, `CancelTransfer`).
    case transfer(RestoreIdentifier, TransferRequest)
    /// `Pair`'s check: the device to pair over (done outside the loop).
    case pairTarget(RestoreIdentifier, PeripheralRef)
    /// `Unpair`'s check and the bond's removal from relinkd's watch.
    case unpairTarget(RestoreIdentifier, PeripheralRef)
    /// `RetrievePeripherals`: the known peripherals among those named.
    case retrievePeripherals(RestoreIdentifier, [PeripheralRef])
    /// `RetrieveConnectedPeripherals`: the devices bluetoothd shows connected that offer one of the services.
    case retrieveConnectedPeripherals(RestoreIdentifier, Set<BluetoothUUID>)
    /// `RegisterForConnectionEvents`: hear of links to peripherals offering one of the services or named.
    case registerForConnectionEvents(RestoreIdentifier, services: Set<BluetoothUUID>, peripherals: [PeripheralRef])
    /// `UnregisterForConnectionEvents`.
    case unregisterForConnectionEvents(RestoreIdentifier)
    /// `AnswerPairing`: the answer to a pairing request.
    case answerPairing(RestoreIdentifier, UInt64, accept: Bool, passkey: UInt32)
}

/// What the loop answers to an API call.
struct APIResult: Sendable {
    /// The method's reply values.
    var values: [DBusValue] = []
    /// After the reply: start sending this identifier's events above `after`.
    var delivery: (id: RestoreIdentifier, after: Int64)?
    /// For reads and writes: the characteristic's (or descriptor's) BlueZ object.
    var characteristic: ObjectPath?
}

typealias APIReply = Result<APIResult, RelinkError>
