/// Names one timer a state machine asked for. A `timerFired` input whose
/// token is not the machine's current one for that purpose is stale (its
/// timer was replaced or cancelled) and is ignored.
public struct TimerToken: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the timer is for.
    public enum Purpose: String, Sendable, Hashable, Codable {
        /// A strategy step (lookup, connect, services, scan).
        case step
        /// The wait between rounds.
        case backoff
        /// The intent's overall deadline.
        case deadline
    }

    /// Unique within one machine; increases with every timer scheduled.
    public var id: UInt64
    public var purpose: Purpose

    public init(id: UInt64, purpose: Purpose) {
        self.id = id
        self.purpose = purpose
    }

    public var description: String { "\(purpose.rawValue)#\(id)" }
}
