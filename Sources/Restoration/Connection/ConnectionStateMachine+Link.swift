public import RelinkModel
// Inputs: what happens to the link.
extension ConnectionStateMachine {
    /// `Device1.Connect` replied with success: wait for services.
    ///
    /// For a device that was already connected (an adopted or restored link)
    /// BlueZ replies at once and `ServicesResolved` is already true, so no
    /// change of it will follow: the daemon then delivers
    /// ``servicesResolved(_:)`` right after this input.
    public mutating func connectSucceeded(_ address: BluetoothAddress) -> [Action] {
        if ownConnect?.address == address { ownConnect = nil }
        return linkAnswered(address)
    }

    /// The link to `address` is up for this intent's `connect` (its reply,
    /// or `Connected=true` before it): wait for services.
    mutating func linkAnswered(_ address: BluetoothAddress) -> [Action] {
        guard case .connecting(let current, let route) = state, current == address else {
            return [log(.ignored(input: "connectSucceeded"))]
        }
        var actions: [Action] = []
        state = .waitingForServices(address, route)
        _ = schedulePhaseTimer(.step, after: options.timeouts.servicesResolved, into: &actions)
        return actions
    }

    /// BlueZ reports `Connected=true` for the device without (or before the
    /// reply to) this intent's Connect: background auto-connect, or another
    /// client. Accepted while trying, backing off or connecting.
    public mutating func deviceConnected(_ address: BluetoothAddress) -> [Action] {
        guard address == knownAddress else { return [log(.ignored(input: "deviceConnected"))] }
        var actions: [Action] = []
        switch state {
        case .connecting(let current, _) where current == address:
            return linkAnswered(address)
        case .trying:
            stopActivity(into: &actions)
        case .backingOff:
            stopActivity(into: &actions)
            stepIndex = options.strategies.count
        default:
            return [log(.ignored(input: "deviceConnected"))]
        }
        state = .waitingForServices(address, .backgroundAutoConnect)
        _ = schedulePhaseTimer(.step, after: options.timeouts.servicesResolved, into: &actions)
        return actions
    }

    /// `ServicesResolved=true`: the link is up. Arms subscriptions, emits
    /// `connected` (or `restored`), persists. While sharing another intent's
    /// link, reports it up the same way (route `sharedLink`).
    public mutating func servicesResolved(_ address: BluetoothAddress) -> [Action] {
        var actions: [Action] = []
        switch state {
        case .waitingForServices(let current, let route) where current == address:
            becomeConnected(address, route: route, into: &actions)
        case .connecting(let current, let route) where current == address:
            becomeConnected(address, route: route, into: &actions)
        case .sharing(let owner, nil):
            sharedLinkUp(owner: owner, address: address, into: &actions)
        default:
            return [log(.ignored(input: "servicesResolved"))]
        }
        return actions
    }

    /// `Device1.Connect` failed, classified. See the type's documentation
    /// for what each class does.
    public mutating func connectFailed(_ failure: ConnectionFailure) -> [Action] {
        ownConnect = nil
        guard case .connecting = state else { return [log(.ignored(input: "connectFailed"))] }
        var actions: [Action] = [log(.connectFailed, failure: failure)]
        handleStepFailure(failure, into: &actions)
        return actions
    }

    /// The link went down (`Connected=false`), with the classified reason
    /// when known. A link reported up: `disconnected` event, then a new round
    /// at once (fresh deadline) or idle when `reconnectAfterDisconnect` is off.
    /// During connecting or waiting for services: counts as that step failing.
    /// `cause`: why bluetoothd says the link ended (BlueZ 5.83 and later),
    /// which tells a link that left from one that failed (``countShortLink(_:cause:)``).
    public mutating func disconnected(_ address: BluetoothAddress, reason: ConnectionFailure? = nil, cause: LinkEndCause? = nil) -> [Action] {
        var actions: [Action] = []
        switch state {
        case .connected(let current, _) where current == address:
            linkLost(reason, cause: cause, into: &actions)
        case .connecting(let current, _) where current == address:
            handleStepFailure(reason ?? ConnectionFailure(.transient, errorName: RelinkErrorName.disconnected.rawValue, message: "disconnected while connecting"), into: &actions)
        case .waitingForServices(let current, _) where current == address:
            let failure = reason ?? ConnectionFailure(.transient, errorName: RelinkErrorName.disconnected.rawValue, message: "disconnected before services resolved")
            actions.append(log(.connectFailed, failure: failure))
            handleStepFailure(failure, into: &actions)
        case .sharing(let owner, let link?) where link == address:
            sharedLinkDown(owner: owner, reason: reason, into: &actions)
        default:
            return [log(.ignored(input: "disconnected"))]
        }
        return actions
    }

    /// A reported-up link is gone: tell, then reconnect or go idle.
    mutating func linkLost(_ reason: ConnectionFailure?, cause: LinkEndCause? = nil, into actions: inout [Action]) {
        stopActivity(into: &actions)
        actions.append(log(.disconnected, failure: reason))
        actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: reason)))
        consecutiveFailedRounds = 0
        countShortLink(reason, cause: cause)
        if options.reconnectAfterDisconnect {
            armDeadline(into: &actions)
            actions.append(.persist(record(.pending)))
            if !backOffAfterShortLinks(into: &actions) { beginRound(into: &actions) }
        } else {
            state = .idle
            actions.append(.persist(record(.idle)))
        }
    }

    /// A connect or services step failed with `failure`.
    mutating func handleStepFailure(_ failure: ConnectionFailure, into actions: inout [Action]) {
        switch failure.failureClass {
        case .notSupported, .notPermitted:
            fail(failure, into: &actions)
        case .notReady:
            waitForAdapter(failure, into: &actions)
        case .deviceGone:
            knownDevicePresent = false
            stopBackgroundAutoConnect(into: &actions)
            skipToScan(after: failure, into: &actions)
        case .transient, .inProgress, .timeout, .cancelled, .unknown:
            nextStep(after: failure, into: &actions)
        }
    }
}
