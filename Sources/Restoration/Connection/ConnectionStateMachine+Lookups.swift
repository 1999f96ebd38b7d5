public import RelinkModel
// Inputs: answers to the strategy steps' questions.
extension ConnectionStateMachine {
    /// The answer to `lookUpKnownDevice`: whether BlueZ has a Device1 at the
    /// stored address. Found: `connect` (and, pending until cancelled,
    /// background auto-connect from now on). Missing (evicted, or the
    /// address rotated): the next step, and no background auto-connect until
    /// found again.
    public mutating func knownDeviceLookup(found: Bool) -> [Action] {
        guard case .trying(.knownIdentifier) = state, let address = knownAddress else {
            return [log(.ignored(input: "knownDeviceLookup"))]
        }
        var actions: [Action] = []
        knownDevicePresent = found
        if found {
            actions.append(log(.knownDeviceFound(address)))
            _ = holdWithAutoConnect(into: &actions)
            connect(address, route: .knownIdentifier, into: &actions)
        } else {
            actions.append(log(.knownDeviceMissing))
            stopBackgroundAutoConnect(into: &actions)
            nextStep(after: .notFound("BlueZ does not know \(address.string)"), into: &actions)
        }
        return actions
    }

    /// The answer to `lookUpConnected`: the devices BlueZ has connected that
    /// offer the services. The choice follows ``CandidateChoice``: the stored
    /// address wins; else a unique match of the ``MatchRule``; several
    /// matches are adopted only with ``CandidateChoice/lowestAddress``.
    public mutating func connectedLookup(_ candidates: [ConnectedCandidate]) -> [Action] {
        guard case .trying(.alreadyConnected) = state else { return [log(.ignored(input: "connectedLookup"))] }
        var actions: [Action] = []
        switch options.candidateChoice.choose(from: candidates, knownAddress: knownAddress, match: matchRule) {
        case .chosen(let candidate):
            actions.append(log(.candidateChosen(candidate.address)))
            // The link this intent's own pending connect made is its own.
            let own = ownConnect.flatMap { $0.address == candidate.address ? $0.route : nil }
            connect(candidate.address, route: own ?? .alreadyConnected, into: &actions)
        case .none:
            actions.append(log(.noCandidate))
            nextStep(after: .notFound("no connected device offers the services"), into: &actions)
        case .ambiguous(let count):
            actions.append(log(.ambiguousCandidates(count: count)))
            nextStep(after: .notFound("\(count) connected devices match; none adopted"), into: &actions)
        }
        return actions
    }

    /// An advertisement from this intent's scan (the scan step, or the
    /// low-duty scan while backing off). One meeting the ``MatchRule``:
    /// `stopScan`, `connect` (its address becomes the stored address).
    /// Others are ignored without a log entry (there are many).
    public mutating func advertisement(_ advertisement: Advertisement) -> [Action] {
        switch state {
        case .trying(.scan), .backingOff(_, .lowDutyScan): break
        default: return []
        }
        guard matchRule.matches(advertisement) else { return [] }
        var actions: [Action] = [log(.scanMatched(advertisement.address))]
        if case .backingOff = state { stepIndex = options.strategies.count }
        let changed = knownAddress != advertisement.address
        connect(advertisement.address, route: .scan, into: &actions)
        if changed { actions.append(.persist(record(.pending))) }
        return actions
    }
}
