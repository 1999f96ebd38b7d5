public import RelinkModel
extension ConnectionStateMachine {
    /// Where a connection intent is.
    public enum State: Sendable, Hashable {
        /// Not started.
        case idle
        /// Running a strategy step and waiting for its result (lookup
        /// answer, or a matching advertisement for `scan`).
        case trying(Strategy)
        /// `connect` issued, waiting for the reply.
        case connecting(BluetoothAddress, ConnectRoute)
        /// Connected, waiting for `ServicesResolved`.
        case waitingForServices(BluetoothAddress, ConnectRoute)
        /// Link up, services resolved, subscriptions armed.
        case connected(BluetoothAddress, ConnectRoute)
        /// Between rounds, until the instant; `background` is what holds the
        /// link meanwhile.
        case backingOff(until: C.Instant, background: Background)
        /// The adapter is off (or BlueZ said NotReady): waiting for the
        /// adapter-up input, no polling.
        case waitingForAdapter
        /// Another intent owns the peripheral; this one shares its link
        /// (`link` is the address while the shared link is up).
        case sharing(owner: ConnectionIntentID, link: BluetoothAddress?)
        /// Gave up. Terminal.
        case failed(ConnectionFailure)
        /// Cancelled by the client. Terminal.
        case cancelled
    }

    /// What keeps looking for the peripheral while backing off.
    public enum Background: Sendable, Hashable {
        case none
        /// BlueZ background auto-connect for the known device.
        case autoConnect(BluetoothAddress)
        /// A low-duty scan with the intent's services.
        case lowDutyScan
    }
}

extension ConnectionStateMachine.State {
    /// True while the intent's peripheral is linked for it: `connected`, or
    /// sharing another intent's link that is up.
    public var isLinkUp: Bool {
        switch self {
        case .connected: true
        case .sharing(_, let link): link != nil
        default: false
        }
    }

    /// True for `failed` and `cancelled`.
    public var isTerminal: Bool {
        switch self {
        case .failed, .cancelled: true
        default: false
        }
    }
}
