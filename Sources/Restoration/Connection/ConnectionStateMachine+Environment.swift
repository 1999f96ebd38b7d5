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
            if link != nil {
                state = .sharing(owner: owner, link: nil)
                actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: .adapterOff)))
            }
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
            if link != nil {
                state = .sharing(owner: owner, link: nil)
                actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: .bluetoothdRestarted)))
            }
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
    public mutating func claimedByOtherIntent(owner: ConnectionIntentID) -> [Action] {
        switch state {
        case .connected, .failed, .cancelled, .sharing: return [log(.ignored(input: "claimedByOtherIntent"))]
        default: break
        }
        var actions: [Action] = []
        if case .idle = state {
            armDeadline(into: &actions)
            actions.append(.persist(record(.pending)))
        }
        stopActivity(into: &actions)
        stopBackgroundAutoConnect(into: &actions)
        state = .sharing(owner: owner, link: nil)
        actions.append(log(.sharing(owner: owner)))
        return actions
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
