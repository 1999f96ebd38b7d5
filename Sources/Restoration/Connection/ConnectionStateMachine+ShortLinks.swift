import RelinkModel
// A link that keeps going down as soon as it is up is not reconnected at once
// for ever (real bluetoothd, docs/real-bluez.md difference 37: a lock that no
// longer knew the central's address asked to pair at each link, the pairing
// failed and the link dropped about 0.5 s after it came up; relinkd
// reconnected at once each time, about 530 times in 4 minutes, because every
// Connect succeeded and a lost link started a new round with no backoff).
extension ConnectionStateMachine {
    /// A link that goes down within this long of coming up is a short link.
    public static var shortLinkLimit: Duration { .seconds(10) }

    /// Counts the link that just went down: short (within
    /// ``shortLinkLimit`` of coming up) or lasting (resets the count).
    mutating func countShortLink() {
        defer { linkUpSince = nil }
        guard let since = linkUpSince, since.duration(to: clock.now) < Self.shortLinkLimit else {
            consecutiveShortLinks = 0
            return
        }
        let longest = max(options.backoff.transient.count, options.backoff.deviceMissing.count)
        consecutiveShortLinks = min(consecutiveShortLinks + 1, longest + 1)
    }

    /// From the second short link in a row, waits before the next round as
    /// after failed rounds (the transient list: 1 s, 2 s, 4 s, ... 300 s),
    /// with nothing armed meanwhile (background auto-connect would make the
    /// same short link at once). The first short link reconnects at once, as
    /// any lost link does. Returns whether it backs off.
    mutating func backOffAfterShortLinks(into actions: inout [Action]) -> Bool {
        guard consecutiveShortLinks >= 2 else { return false }
        let failure = ConnectionFailure(.transient, errorName: RelinkErrorName.disconnected.rawValue,
                                        message: "the link went down within \(Self.shortLinkLimit) of coming up \(consecutiveShortLinks) times in a row")
        guard case .retry(let interval) = options.backoff.decision(for: .transient, failedRounds: consecutiveShortLinks - 1, random: &random) else {
            return false
        }
        stopBackgroundAutoConnect(into: &actions)
        let until = schedulePhaseTimer(.backoff, after: interval, into: &actions)
        actions.append(log(.backingOff(interval), failure: failure))
        state = .backingOff(until: until, background: .none)
        return true
    }
}
