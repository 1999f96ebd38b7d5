public import RelinkModel
/// The wait between two rounds of strategies, chosen by the class of the
/// failure that ended the round.
///
/// After the n-th consecutive failed round (n from 1) the machine waits
/// `list[n-1]`, or the list's last entry (the maximum) once n passes its end,
/// then scales it by a jitter factor drawn uniformly from
/// `1 - jitter ... 1 + jitter`. A connection resets n to 0.
///
/// Default lists:
/// * transient, inProgress, timeout, cancelled, unknown:
///   1, 2, 4, 8, 16, 32, 64, 128, 300 s (BlueZ's reconnect list 1..64 s,
///   extended to a 5 minute maximum for links pending for days);
/// * deviceGone (lookups and scans found nothing):
///   4, 8, 16, 32, 64, 128, 300 s (bleak-retry-connector waits 4 s when the
///   device is missing);
/// * jitter 20 %.
///
/// Classes without a list: notReady waits for the adapter-up input instead of
/// a timer; notSupported and notPermitted fail the intent at once.
public struct BackoffPolicy: Sendable, Hashable, Codable {
    public var transient: [Duration]
    public var deviceMissing: [Duration]
    /// Fraction in `0 ..< 1`.
    public var jitter: Double

    public static let defaultTransient: [Duration] = [1, 2, 4, 8, 16, 32, 64, 128, 300].map { .seconds($0) }
    /// The longest interval accepted (24 h).
    public static let maximumInterval: Duration = .seconds(86_400)

    public static let defaultDeviceMissing: [Duration] = [4, 8, 16, 32, 64, 128, 300].map { .seconds($0) }

    public init(transient: [Duration] = Self.defaultTransient, deviceMissing: [Duration] = Self.defaultDeviceMissing, jitter: Double = 0.2) {
        self.transient = transient
        self.deviceMissing = deviceMissing
        self.jitter = jitter
    }

    /// What to do after a failure of `failureClass`.
    public enum Decision: Sendable, Hashable {
        case retry(after: Duration)
        case waitForAdapter
        case fail
    }

    /// The list used for `failureClass`, or nil for classes that do not back off.
    public func intervals(for failureClass: FailureClass) -> [Duration]? {
        switch failureClass {
        case .transient, .inProgress, .timeout, .cancelled, .unknown: transient
        case .deviceGone: deviceMissing
        case .notReady, .notSupported, .notPermitted: nil
        }
    }

    /// The un-jittered interval after the `failedRounds`-th consecutive failure.
    public func baseInterval(for failureClass: FailureClass, failedRounds: Int) -> Duration? {
        guard let list = intervals(for: failureClass), let last = list.last else { return nil }
        let index = max(failedRounds, 1) - 1
        return index < list.count ? list[index] : last
    }

    /// The decision after the `failedRounds`-th consecutive failed round.
    public func decision(for failureClass: FailureClass, failedRounds: Int, random: inout any RandomSource) -> Decision {
        switch failureClass {
        case .notReady: return .waitForAdapter
        case .notSupported, .notPermitted: return .fail
        default: break
        }
        guard let base = baseInterval(for: failureClass, failedRounds: failedRounds) else { return .fail }
        // Clamped so that options edited past validation cannot trap.
        let spread = jitter.isFinite ? min(max(jitter, 0), 0.99) : 0
        let unit = min(max(random.nextUnit(), 0), 1)
        let capped = min(base, Self.maximumInterval)
        return .retry(after: capped * (1 + spread * (2 * unit - 1)))
    }

    /// Checks that lists are non-empty with positive entries and jitter in `0 ..< 1`.
    /// - Throws: ``DomainError/invalidOptions(_:)`` naming the broken rule.
    public func validate() throws(DomainError) {
        if transient.isEmpty || deviceMissing.isEmpty { throw .invalidOptions("backoff lists must not be empty") }
        if (transient + deviceMissing).contains(where: { $0 <= .zero }) { throw .invalidOptions("backoff intervals must be positive") }
        if (transient + deviceMissing).contains(where: { $0 > Self.maximumInterval }) { throw .invalidOptions("backoff intervals must be at most 24 h") }
        if !(0 ..< 1).contains(jitter) { throw .invalidOptions("jitter must be in 0 ..< 1") }
    }
}
