import RelinkModel
// The round and step mechanics shared by every input of the machine.
extension ConnectionStateMachine {
    func log(_ kind: Decision.Kind, failure: ConnectionFailure? = nil) -> Action {
        .log(Decision(intent: intent, kind: kind, attempt: attempt, strategy: currentStrategy, failure: failure))
    }

    func record(_ phase: ConnectionIntentRecord.Phase) -> ConnectionIntentRecord {
        ConnectionIntentRecord(intent: intent, options: options, address: knownAddress, phase: phase)
    }

    mutating func makeToken(_ purpose: TimerToken.Purpose) -> TimerToken {
        defer { nextTokenID &+= 1 }
        return TimerToken(id: nextTokenID, purpose: purpose)
    }

    /// Replaces the step/backoff timer with one firing after `interval`.
    mutating func schedulePhaseTimer(_ purpose: TimerToken.Purpose, after interval: Duration, into actions: inout [Action]) -> C.Instant {
        cancelPhaseTimer(into: &actions)
        let token = makeToken(purpose)
        let instant = clock.now.advanced(by: interval)
        phaseTimer = token
        actions.append(.scheduleTimer(token, at: instant))
        return instant
    }

    mutating func cancelPhaseTimer(into actions: inout [Action]) {
        if let token = phaseTimer {
            actions.append(.cancelTimer(token))
            phaseTimer = nil
        }
    }

    /// Starts the overall deadline, when the options have one.
    mutating func armDeadline(into actions: inout [Action]) {
        cancelDeadline(into: &actions)
        guard case .after(let limit) = options.deadline else { return }
        let token = makeToken(.deadline)
        let instant = clock.now.advanced(by: limit)
        deadlineTimer = token
        deadline = instant
        actions.append(.scheduleTimer(token, at: instant))
    }

    mutating func cancelDeadline(into actions: inout [Action]) {
        if let token = deadlineTimer {
            actions.append(.cancelTimer(token))
            deadlineTimer = nil
        }
        deadline = nil
    }

    mutating func stopScan(into actions: inout [Action]) {
        if scanActive {
            actions.append(.stopScan)
            scanActive = false
        }
    }

    /// Stops what the current step or backoff is doing (scan, phase timer);
    /// never disconnects.
    mutating func stopActivity(into actions: inout [Action]) {
        stopScan(into: &actions)
        cancelPhaseTimer(into: &actions)
    }

    mutating func stopBackgroundAutoConnect(into actions: inout [Action]) {
        if let address = backgroundAutoConnect {
            actions.append(.stopBackgroundAutoConnect(address))
            backgroundAutoConnect = nil
            backgroundAutoConnectNeedsRenewal = false
        }
    }

    mutating func beginRound(into actions: inout [Action]) {
        stopActivity(into: &actions)
        attempt += 1
        stepIndex = 0
        roundFailure = nil
        guard let first = options.strategies.first else {
            // Only reachable when options were edited past validation.
            fail(ConnectionFailure(.notSupported, errorName: RelinkErrorName.invalidArguments.rawValue, message: "no strategy to run"), into: &actions)
            return
        }
        state = .trying(first)
        actions.append(log(.roundStarted))
        enterStep(into: &actions)
    }

    /// Runs the step at `stepIndex`, skipping steps that cannot run; ends the
    /// round past the last step.
    mutating func enterStep(into actions: inout [Action]) {
        while stepIndex < options.strategies.count {
            let strategy = options.strategies[stepIndex]
            state = .trying(strategy)
            switch strategy {
            case .knownIdentifier:
                guard let address = knownAddress else {
                    actions.append(log(.strategySkipped(reason: "no stored address")))
                    stepIndex += 1
                    continue
                }
                actions.append(log(.strategyStarted))
                actions.append(.lookUpKnownDevice(address))
                _ = schedulePhaseTimer(.step, after: options.timeouts.lookup, into: &actions)
            case .alreadyConnected:
                actions.append(log(.strategyStarted))
                actions.append(.lookUpConnected(services: options.services))
                _ = schedulePhaseTimer(.step, after: options.timeouts.lookup, into: &actions)
            case .scan:
                actions.append(log(.strategyStarted))
                actions.append(.startScan(strategyScan))
                scanActive = true
                _ = schedulePhaseTimer(.step, after: options.timeouts.scan, into: &actions)
            }
            return
        }
        endRound(into: &actions)
    }

    /// The current step failed: remember why, go on with the next one.
    mutating func nextStep(after failure: ConnectionFailure, into actions: inout [Action]) {
        roundFailure = failure
        stopActivity(into: &actions)
        stepIndex += 1
        enterStep(into: &actions)
    }

    /// A deviceGone failure: go straight to the scan step when it is still
    /// ahead in this round, else on as usual.
    mutating func skipToScan(after failure: ConnectionFailure, into actions: inout [Action]) {
        if let scanIndex = options.strategies.firstIndex(of: .scan), scanIndex > stepIndex {
            roundFailure = failure
            stopActivity(into: &actions)
            stepIndex = scanIndex
            enterStep(into: &actions)
        } else {
            nextStep(after: failure, into: &actions)
        }
    }

    /// Every step failed: back off by the class of the last failure.
    mutating func endRound(into actions: inout [Action]) {
        stopActivity(into: &actions)
        let failure = roundFailure ?? .notFound("no strategy could run")
        let longest = max(options.backoff.transient.count, options.backoff.deviceMissing.count)
        consecutiveFailedRounds = min(consecutiveFailedRounds + 1, longest)
        reportRestoredLinkLost(failure, into: &actions)
        switch options.backoff.decision(for: failure.failureClass, failedRounds: consecutiveFailedRounds, random: &random) {
        case .fail:
            fail(failure, into: &actions)
        case .waitForAdapter:
            waitForAdapter(failure, into: &actions)
        case .retry(let interval):
            let until = schedulePhaseTimer(.backoff, after: interval, into: &actions)
            actions.append(log(.backingOff(interval), failure: failure))
            state = .backingOff(until: until, background: holdInBackground(into: &actions))
        }
    }

    /// For intents pending until cancelled: background auto-connect for a
    /// device BlueZ knows (a form of the known-identifier strategy, so only
    /// when that is in the order), else a low-duty scan (only when the scan
    /// strategy is in the order), else nothing.
    mutating func holdInBackground(into actions: inout [Action]) -> Background {
        guard case .pendingUntilCancelled = options.deadline else { return .none }
        if let address = holdWithAutoConnect(into: &actions) {
            return .autoConnect(address)
        }
        stopBackgroundAutoConnect(into: &actions)
        guard options.strategies.contains(.scan) else { return .none }
        var scan = strategyScan
        scan.lowDuty = true
        actions.append(.startScan(scan))
        scanActive = true
        actions.append(log(.lowDutyScan))
        return .lowDutyScan
    }

    /// For intents pending until cancelled whose device BlueZ knows (and
    /// with the known-identifier strategy in the order): background
    /// auto-connect on, asked for once (again after a loss that needs it
    /// renewed). It is asked for at the first lookup that finds the device
    /// and stays on through the rounds, so the kernel connects the device at
    /// its first advertisement whatever step a round is in (a scan step
    /// needs one advertisement to find it and another to connect).
    /// Returns the address held, or nil.
    mutating func holdWithAutoConnect(into actions: inout [Action]) -> BluetoothAddress? {
        guard case .pendingUntilCancelled = options.deadline, knownDevicePresent,
              options.strategies.contains(.knownIdentifier), let address = knownAddress else { return nil }
        if backgroundAutoConnect != address || backgroundAutoConnectNeedsRenewal {
            if backgroundAutoConnect != address { stopBackgroundAutoConnect(into: &actions) }
            backgroundAutoConnect = address
            backgroundAutoConnectNeedsRenewal = false
            actions.append(.useBackgroundAutoConnect(address))
            actions.append(log(.backgroundAutoConnect(address)))
        }
        return address
    }

    /// A link restored as connected turned out not to be up: say so once.
    mutating func reportRestoredLinkLost(_ failure: ConnectionFailure, into actions: inout [Action]) {
        guard restoringConnected else { return }
        restoringConnected = false
        actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: failure)))
        actions.append(.tellSharers(link: nil, failure: failure))
    }

    mutating func waitForAdapter(_ failure: ConnectionFailure, into actions: inout [Action]) {
        reportRestoredLinkLost(failure, into: &actions)
        stopActivity(into: &actions)
        state = .waitingForAdapter
        actions.append(log(.waitingForAdapter, failure: failure))
    }

    /// Gives up: stops everything, reports `failedToConnect`, persists.
    mutating func fail(_ failure: ConnectionFailure, into actions: inout [Action]) {
        switch state {
        case .connecting(let address, let route), .waitingForServices(let address, let route):
            if route != .alreadyConnected && route != .sharedLink { actions.append(.disconnect(address)) }
        default:
            break
        }
        stopActivity(into: &actions)
        cancelDeadline(into: &actions)
        stopBackgroundAutoConnect(into: &actions)
        actions.append(log(.failed, failure: failure))
        reportRestoredLinkLost(failure, into: &actions)
        state = .failed(failure)
        actions.append(.emit(.failedToConnect(peripheral: intent.peripheral, reason: failure)))
        actions.append(.persist(record(.failed(failure))))
    }

    /// Issues `connect` for a chosen device.
    mutating func connect(_ address: BluetoothAddress, route: ConnectRoute, into actions: inout [Action]) {
        stopActivity(into: &actions)
        if route != .alreadyConnected && route != .sharedLink { ownConnect = OwnConnect(address: address, route: route) }
        knownAddress = address
        state = .connecting(address, route)
        actions.append(log(.connecting(address)))
        actions.append(.connect(address))
        _ = schedulePhaseTimer(.step, after: options.timeouts.connect, into: &actions)
    }

    /// The link is up with services resolved.
    mutating func becomeConnected(_ address: BluetoothAddress, route: ConnectRoute, into actions: inout [Action]) {
        stopActivity(into: &actions)
        cancelDeadline(into: &actions)
        consecutiveFailedRounds = 0
        linkUpSince = clock.now
        linkWorked = false
        knownAddress = address
        knownDevicePresent = true
        state = .connected(address, route)
        actions.append(log(.connected(route)))
        actions.append(.armSubscriptions(address))
        if restoringConnected {
            restoringConnected = false
            actions.append(.emit(.restored(peripheral: intent.peripheral, address: address, route: route)))
        } else {
            actions.append(.emit(.connected(peripheral: intent.peripheral, address: address, route: route)))
        }
        actions.append(.persist(record(.connected)))
        actions.append(.tellSharers(link: address, failure: nil))
    }
}
