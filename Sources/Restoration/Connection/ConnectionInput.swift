public import RelinkModel
extension ConnectionStateMachine {
    /// Every input of the machine as a value, so the daemon can queue a
    /// machine's inputs on one ordered stream and journal them. ``handle(_:)``
    /// calls the method of the same name.
    public enum Input: Sendable, Hashable {
        case start(restoringConnected: Bool)
        case cancel(linkSharedWithOthers: Bool)
        case knownDeviceLookup(found: Bool)
        case connectedLookup([ConnectedCandidate])
        case advertisement(Advertisement)
        case connectSucceeded(BluetoothAddress)
        case deviceConnected(BluetoothAddress)
        case servicesResolved(BluetoothAddress)
        /// The current link carried a value or a GATT reply (``linkCarried()``).
        case linkCarried
        case connectFailed(ConnectionFailure)
        /// The link went down; `cause`: bluetoothd's reason, where it gives one (BlueZ 5.83+).
        case disconnected(BluetoothAddress, reason: ConnectionFailure?, cause: LinkEndCause? = nil)
        case timerFired(TimerToken)
        case adapterPowered(Bool)
        case bluetoothdRestarted
        case claimedByOtherIntent(owner: ConnectionIntentID, ownerLink: BluetoothAddress?, restoringConnected: Bool)
        case ownerLink(BluetoothAddress?, failure: ConnectionFailure?)
        case ownershipGranted
        /// bluetoothd shows the device at its identity address now (``addressResolved(from:to:)``).
        case addressResolved(from: BluetoothAddress, to: BluetoothAddress)
    }

    /// Feeds one input; returns the actions to perform, in order.
    public mutating func handle(_ input: Input) -> [Action] {
        switch input {
        case .start(let restoring): start(restoringConnected: restoring)
        case .cancel(let shared): cancel(linkSharedWithOthers: shared)
        case .knownDeviceLookup(let found): knownDeviceLookup(found: found)
        case .connectedLookup(let candidates): connectedLookup(candidates)
        case .advertisement(let report): advertisement(report)
        case .connectSucceeded(let address): connectSucceeded(address)
        case .deviceConnected(let address): deviceConnected(address)
        case .servicesResolved(let address): servicesResolved(address)
        case .linkCarried: linkCarried()
        case .connectFailed(let failure): connectFailed(failure)
        case .disconnected(let address, let reason, let cause): disconnected(address, reason: reason, cause: cause)
        case .timerFired(let token): timerFired(token)
        case .adapterPowered(let powered): adapterPowered(powered)
        case .bluetoothdRestarted: bluetoothdRestarted()
        case .claimedByOtherIntent(let owner, let link, let restoring):
            claimedByOtherIntent(owner: owner, ownerLink: link, restoringConnected: restoring)
        case .ownerLink(let link, let failure): ownerLink(link, failure: failure)
        case .ownershipGranted: ownershipGranted()
        case .addressResolved(let old, let identity): addressResolved(from: old, to: identity)
        }
    }
}
