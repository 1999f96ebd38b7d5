public import RelinkModel
/// Everything that shapes how one connection intent reaches its peripheral.
///
/// Defaults: strategies known identifier → already connected → scan;
/// ``StepTimeouts`` defaults; pending until cancelled; ``BackoffPolicy``
/// defaults; a unique candidate required; reconnect after every disconnect.
public struct ConnectionOptions: Sendable, Hashable, Codable {
    /// The strategies of one round, in order; each at most once.
    public var strategies: [Strategy]
    public var timeouts: StepTimeouts
    public var deadline: ConnectionDeadline
    public var backoff: BackoffPolicy
    /// Services the peripheral offers: the already-connected lookup asks for
    /// devices with these, and the scan strategy scans for them.
    public var services: Set<BluetoothUUID>
    /// Recognises the peripheral among scan results and connected devices.
    /// Its address is filled in from the intent's stored address when nil.
    public var match: MatchRule
    public var candidateChoice: CandidateChoice
    /// Start a new round after a disconnect (true), or end the intent.
    public var reconnectAfterDisconnect: Bool
    /// Pair (through relinkd's agent) when a read, write or subscription
    /// fails for insufficient authentication or encryption, then try it
    /// once more: CoreBluetooth's behaviour, the default. The client's
    /// choice, stored with the intent (store v10).
    public var pairOnDemand: Bool
    /// The I/O capability relinkd's agent is registered with when it pairs
    /// for this intent (`Pair`, pairing on demand); anything but
    /// `NoInputNoOutput` forwards the peripheral's passkey or confirmation
    /// request to the identifier's client. Default Just Works; the
    /// client's choice, stored with the intent (store v12).
    public var pairingCapability: AgentCapability

    /// - Throws: ``DomainError/invalidOptions(_:)`` when `strategies` is empty
    ///   or repeats a strategy, a timeout or deadline is not positive, or the
    ///   backoff policy is invalid.
    public init(
        strategies: [Strategy] = Strategy.defaultOrder,
        timeouts: StepTimeouts = StepTimeouts(),
        deadline: ConnectionDeadline = .pendingUntilCancelled,
        backoff: BackoffPolicy = BackoffPolicy(),
        services: Set<BluetoothUUID> = [],
        match: MatchRule = MatchRule(),
        candidateChoice: CandidateChoice = .requireUnique,
        reconnectAfterDisconnect: Bool = true,
        pairOnDemand: Bool = true,
        pairingCapability: AgentCapability = .noInputNoOutput
    ) throws(DomainError) {
        self.strategies = strategies
        self.timeouts = timeouts
        self.deadline = deadline
        self.backoff = backoff
        self.services = services
        self.match = match
        self.candidateChoice = candidateChoice
        self.reconnectAfterDisconnect = reconnectAfterDisconnect
        self.pairOnDemand = pairOnDemand
        self.pairingCapability = pairingCapability
        try validate()
    }

    /// Re-checks the rules of ``init(strategies:timeouts:deadline:backoff:services:match:candidateChoice:reconnectAfterDisconnect:pairOnDemand:pairingCapability:)``
    /// (for values decoded from the store).
    /// - Throws: ``DomainError/invalidOptions(_:)``.
    public func validate() throws(DomainError) {
        if strategies.isEmpty { throw .invalidOptions("at least one strategy is needed") }
        if Set(strategies).count != strategies.count { throw .invalidOptions("a strategy appears twice") }
        if timeouts.all.contains(where: { $0 <= .zero }) { throw .invalidOptions("step timeouts must be positive") }
        if timeouts.all.contains(where: { $0 > BackoffPolicy.maximumInterval }) { throw .invalidOptions("step timeouts must be at most 24 h") }
        if case .after(let limit) = deadline, limit <= .zero { throw .invalidOptions("deadline must be positive") }
        try backoff.validate()
    }
}

extension ConnectionOptions {
    private enum CodingKeys: String, CodingKey {
        case strategies, timeouts, deadline, backoff, services, match, candidateChoice, reconnectAfterDisconnect, pairOnDemand, pairingCapability
    }

    /// Decodes and validates (options read back from the store obey the
    /// same rules as new ones).
    /// - Throws: `DecodingError`, or ``DomainError/invalidOptions(_:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            strategies: container.decode([Strategy].self, forKey: .strategies),
            timeouts: container.decode(StepTimeouts.self, forKey: .timeouts),
            deadline: container.decode(ConnectionDeadline.self, forKey: .deadline),
            backoff: container.decode(BackoffPolicy.self, forKey: .backoff),
            services: container.decode(Set<BluetoothUUID>.self, forKey: .services),
            match: container.decode(MatchRule.self, forKey: .match),
            candidateChoice: container.decode(CandidateChoice.self, forKey: .candidateChoice),
            reconnectAfterDisconnect: container.decode(Bool.self, forKey: .reconnectAfterDisconnect),
            pairOnDemand: container.decodeIfPresent(Bool.self, forKey: .pairOnDemand) ?? true,
            pairingCapability: container.decodeIfPresent(AgentCapability.self, forKey: .pairingCapability) ?? .noInputNoOutput)
    }
}
