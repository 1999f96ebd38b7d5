import RelinkModel
// A link that keeps going down as soon as it is up is not reconnected at once
// for ever (real bluetoothd, docs/real-bluez.md difference 37: a lock that no
// longer knew the central's address asked to pair at each link, the pairing
// failed and the link dropped about 0.5 s after it came up; relinkd
// reconnected at once each time, about 530 times in 4 minutes, because every
// Connect succeeded and a lost link started a new round with no backoff).
//
// A short link counts only when it carried nothing: no notified value and no
// GATT reply came on it (``linkCarried()``). A lock that sent its state and
// then left range, or a wearable at the edge of range, worked and left: it
// is reconnected at once however short its links (issue 31's regression: the
// bench's back-in-range cases waited 1 s, 2 s, 4 s ... for such a device).
extension ConnectionStateMachine {
    /// A link that goes down within this long of coming up is a short link.
    public static var shortLinkLimit: Duration { .seconds(10) }

    /// The current link carried something: a notified value or a
    /// successful GATT reply (StartNotify's CCCD write, a read, a write).
    /// It then counts as a link that worked, however short. Ignored unless
    /// a link is up; returns no action (it is fed on the value path).
    public mutating func linkCarried() -> [Action] {
        if case .connected = state { linkWorked = true }
        return []
    }

    /// Counts the link that just went down: short (within
    /// ``shortLinkLimit`` of coming up, having carried nothing) or one that
    /// worked (resets the count). A link lost to a bluetoothd restart says
    /// nothing of the peripheral: it leaves the count as it is. Where
    /// bluetoothd gives the cause (BlueZ 5.83 and later): a supervision
    /// timeout is a link that was up and left (resets the count); one this
    /// host ended (`Local`, `Suspend`) leaves the count; an authentication
    /// failure is a short link however much it carried.
    mutating func countShortLink(_ reason: ConnectionFailure?, cause: LinkEndCause? = nil) {
        defer {
            linkUpSince = nil
            linkWorked = false
        }
        if reason == .bluetoothdRestarted || cause == .local || cause == .suspend { return }
        let short = linkUpSince.map { $0.duration(to: clock.now) < Self.shortLinkLimit } ?? false
        let failedAtOnce = cause == .authentication || (cause != .timeout && !linkWorked)
        guard short, failedAtOnce else {
            consecutiveShortLinks = 0
            return
        }
        let longest = max(options.backoff.transient.count, options.backoff.deviceMissing.count)
        consecutiveShortLinks = min(consecutiveShortLinks + 1, longest + 1)
    }

    /// From the second short link in a row (each carrying nothing), waits before the next round as
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
