public import RelinkModel
extension ConnectionStateMachine {
    /// What the daemon's actor must do for this intent, in order.
    public enum Action: Sendable, Hashable {
        /// Is there a Device1 at this address in the BlueZ mirror? Answer
        /// with ``ConnectionStateMachine/knownDeviceLookup(found:)``.
        case lookUpKnownDevice(BluetoothAddress)
        /// Which connected devices offer these services? Answer with
        /// ``ConnectionStateMachine/connectedLookup(_:)``.
        case lookUpConnected(services: Set<BluetoothUUID>)
        /// Register this intent's scan with the ``ScanCoordinator`` (replacing
        /// any earlier one of the intent); forward its advertisements with
        /// ``ConnectionStateMachine/advertisement(_:)``.
        case startScan(ScanIntent)
        /// Remove this intent's scan from the coordinator.
        case stopScan
        /// `Device1.Connect`; answer with `connectSucceeded` or `connectFailed`.
        case connect(BluetoothAddress)
        /// `Device1.Disconnect` (also cancels a pending Connect).
        case disconnect(BluetoothAddress)
        /// Call ``ConnectionStateMachine/timerFired(_:)`` with the token at the instant.
        case scheduleTimer(TimerToken, at: C.Instant)
        /// The timer with this token is no longer wanted.
        case cancelTimer(TimerToken)
        /// The link is up with services resolved: let the
        /// ``SubscriptionPlanner`` StartNotify what this peripheral needs.
        case armSubscriptions(BluetoothAddress)
        /// The link this intent owns is reported up (`link`), or a link
        /// restored as connected turned out gone (`link` nil, with why):
        /// every intent sharing the peripheral (``OwnershipRegistry/sharers(of:)``)
        /// follows with ``ConnectionStateMachine/ownerLink(_:failure:)``.
        /// Needed where no BlueZ signal reaches the sharers: a link adopted
        /// at start-up, or found already up, changes no property.
        case tellSharers(link: BluetoothAddress?, failure: ConnectionFailure?)
        /// Hold the link with BlueZ background auto-connect for this device.
        /// Asked again after a bluetoothd restart or an adapter power cycle:
        /// carrying it out must be idempotent.
        case useBackgroundAutoConnect(BluetoothAddress)
        /// Stop doing so.
        case stopBackgroundAutoConnect(BluetoothAddress)
        /// Append to the identifier's outbox.
        case emit(RelinkEvent)
        /// Write the intent's record to the store.
        case persist(ConnectionIntentRecord)
        /// Journal the decision.
        case log(Decision)
    }
}
