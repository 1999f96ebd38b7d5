public import RelinkModel
// Inputs: the adapter, bluetoothd and other intents.
extension ConnectionStateMachine {
    /// The adapter's `Powered` changed. Off: a link reported up is reported
    /// down (reason adapterOff) and the machine waits, without polling. On:
    /// a waiting machine starts a new round at once.
    ///
    /// Contract for the daemon: after any action batch that leaves the
    /// machine in ``State/waitingForAdapter`` while the adapter is in fact
    /// powered (BlueZ said NotReady for another reason), deliver
    /// `adapterPowered(true)`.
    public mutating func adapterPowered(_ powered: Bool) -> [Action] {
        var actions: [Action] = []
        if powered {
            guard case .waitingForAdapter = state else { return [] }
            actions.append(log(.adapterBack))
            beginRound(into: &actions)
            return actions
        }
        switch state {
        case .idle, .failed, .cancelled, .waitingForAdapter:
            return []
        default:
            break
        }
        // The kernel's auto-connect list may not survive the power cycle: ask
        // again at the next backoff (the daemon treats it as idempotent).
        backgroundAutoConnectNeedsRenewal = true
        switch state {
        case .sharing(let owner, let link):
            if link != nil { sharedLinkDown(owner: owner, reason: .adapterOff, into: &actions) }
            return actions
        case .connected:
            actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: .adapterOff)))
            armDeadline(into: &actions)
        default:
            break
        }
        waitForAdapter(.adapterOff, into: &actions)
        return actions
    }

    /// bluetoothd restarted and the daemon re-synchronised its mirror: every
    /// BlueZ-side resource (connect, scan session, auto-connect, notify
    /// sessions) is gone. A link reported up is reported down; a new round
    /// starts at once (it adopts a link that survived). A machine waiting for
    /// the adapter keeps waiting.
    public mutating func bluetoothdRestarted() -> [Action] {
        var actions: [Action] = []
        switch state {
        case .idle, .failed, .cancelled:
            return []
        case .waitingForAdapter:
            backgroundAutoConnectNeedsRenewal = true
            scanActive = false
            return [log(.resync)]
        case .sharing(let owner, let link):
            if link != nil { sharedLinkDown(owner: owner, reason: .bluetoothdRestarted, into: &actions) }
            return actions
        case .connected:
            actions.append(log(.resync))
            backgroundAutoConnectNeedsRenewal = true
            linkLost(.bluetoothdRestarted, into: &actions)
            return actions
        default:
            actions.append(log(.resync))
            backgroundAutoConnectNeedsRenewal = true
            beginRound(into: &actions)
            return actions
        }
    }

    /// The ownership registry gave the peripheral to another intent: this
    /// one stops its own work (without disconnecting: that is the owner's
    /// link) and shares the owner's link. Ignored once connected or terminal.
    /// - Parameters:
    ///   - ownerLink: the owner's link when it is already up (its
    ///     ``reportedLink``): the sharer reports it up at once, as
    ///     CoreBluetooth calls `didConnect` at once for a peripheral that is
    ///     already connected; no BlueZ signal would tell it otherwise.
    ///   - restoringConnected: a relinkd restart resumes an intent whose
    ///     shared link was up before: its first link is reported `restored`,
    ///     and if the owner finds the link gone, `disconnected` once.
    public mutating func claimedByOtherIntent(owner: ConnectionIntentID, ownerLink: BluetoothAddress? = nil,
                                              restoringConnected: Bool = false) -> [Action] {
        switch state {
        case .connected, .failed, .cancelled, .sharing: return [log(.ignored(input: "claimedByOtherIntent"))]
        default: break
        }
        var actions: [Action] = []
        if case .idle = state {
            self.restoringConnected = restoringConnected
            armDeadline(into: &actions)
            actions.append(.persist(record(.pending)))
        }
        stopActivity(into: &actions)
        stopBackgroundAutoConnect(into: &actions)
        state = .sharing(owner: owner, link: nil)
        actions.append(log(.sharing(owner: owner)))
        if let ownerLink { sharedLinkUp(owner: owner, address: ownerLink, into: &actions) }
        return actions
    }

    /// What the owner of the peripheral reported about its link
    /// (its ``Action/tellSharers(link:failure:)``). A sharer whose shared
    /// link is not up yet reports it up (`link`); one restored as connected
    /// whose owner found the link gone (`link` nil) reports `disconnected`
    /// once. Anything else is ignored: BlueZ's own signals reach sharers too.
    public mutating func ownerLink(_ link: BluetoothAddress?, failure: ConnectionFailure?) -> [Action] {
        guard case .sharing(let owner, nil) = state else { return [log(.ignored(input: "ownerLink"))] }
        var actions: [Action] = []
        if let link {
            sharedLinkUp(owner: owner, address: link, into: &actions)
        } else if restoringConnected {
            restoringConnected = false
            actions.append(log(.disconnected, failure: failure))
            actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: failure)))
            actions.append(.persist(record(.pending)))
        } else {
            return [log(.ignored(input: "ownerLink"))]
        }
        return actions
    }

    /// The link this intent shares is up: arm, report (`restored` after a
    /// restart that found it up), persist as connected so that a restart
    /// restores it.
    mutating func sharedLinkUp(owner: ConnectionIntentID, address: BluetoothAddress, into actions: inout [Action]) {
        cancelDeadline(into: &actions)
        state = .sharing(owner: owner, link: address)
        knownAddress = address
        actions.append(log(.connected(.sharedLink)))
        actions.append(.armSubscriptions(address))
        if restoringConnected {
            restoringConnected = false
            actions.append(.emit(.restored(peripheral: intent.peripheral, address: address, route: .sharedLink)))
        } else {
            actions.append(.emit(.connected(peripheral: intent.peripheral, address: address, route: .sharedLink)))
        }
        actions.append(.persist(record(.connected)))
    }

    /// The link this intent shares went down: report it, persist as pending.
    mutating func sharedLinkDown(owner: ConnectionIntentID, reason: ConnectionFailure?, into actions: inout [Action]) {
        state = .sharing(owner: owner, link: nil)
        actions.append(log(.disconnected, failure: reason))
        actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: reason)))
        armDeadline(into: &actions)
        actions.append(.persist(record(.pending)))
    }

    /// The link this intent reports up: its own, or the one it shares.
    /// What a new sharer is given (``claimedByOtherIntent(owner:ownerLink:restoringConnected:)``).
    public var reportedLink: BluetoothAddress? {
        switch state {
        case .connected(let address, _): address
        case .sharing(_, let link): link
        default: nil
        }
    }

    /// The owner released the peripheral and the registry passed it to this
    /// intent: keep a shared link that is up (now as owner), else start a round.
    public mutating func ownershipGranted() -> [Action] {
        guard case .sharing(_, let link) = state else { return [log(.ignored(input: "ownershipGranted"))] }
        var actions: [Action] = [log(.ownershipGranted)]
        if let link {
            state = .connected(link, .sharedLink)
        } else {
            beginRound(into: &actions)
        }
        return actions
    }
}
