public import RelinkModel
/// One decision of a connection state machine, carried in a `log` action so
/// the daemon can journal it with structured fields
/// (`RELINK_RESTORE_ID`, `RELINK_PERIPHERAL`, `RELINK_STRATEGY`,
/// `RELINK_ATTEMPT`, `RELINK_ERROR`, and `RELINK_DECISION` = ``Kind`` name).
public struct Decision: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case started(restoring: Bool)
        case roundStarted
        case strategyStarted
        case strategySkipped(reason: String)
        case knownDeviceFound(BluetoothAddress)
        case knownDeviceMissing
        case candidateChosen(BluetoothAddress)
        case noCandidate
        case ambiguousCandidates(count: Int)
        case scanMatched(BluetoothAddress)
        case connecting(BluetoothAddress)
        case connectFailed
        case stepTimedOut
        case backingOff(Duration)
        case backgroundAutoConnect(BluetoothAddress)
        case lowDutyScan
        case waitingForAdapter
        case adapterBack
        case connected(ConnectRoute)
        case disconnected
        case failed
        case cancelled
        case resync
        case sharing(owner: ConnectionIntentID)
        case ownershipGranted
        case staleTimer(TimerToken)
        case ignored(input: String)

        /// A short stable name for the journal's `RELINK_DECISION` field.
        public var name: String {
            switch self {
            case .started: "started"
            case .roundStarted: "round-started"
            case .strategyStarted: "strategy-started"
            case .strategySkipped: "strategy-skipped"
            case .knownDeviceFound: "known-device-found"
            case .knownDeviceMissing: "known-device-missing"
            case .candidateChosen: "candidate-chosen"
            case .noCandidate: "no-candidate"
            case .ambiguousCandidates: "ambiguous-candidates"
            case .scanMatched: "scan-matched"
            case .connecting: "connecting"
            case .connectFailed: "connect-failed"
            case .stepTimedOut: "step-timed-out"
            case .backingOff: "backing-off"
            case .backgroundAutoConnect: "background-auto-connect"
            case .lowDutyScan: "low-duty-scan"
            case .waitingForAdapter: "waiting-for-adapter"
            case .adapterBack: "adapter-back"
            case .connected: "connected"
            case .disconnected: "disconnected"
            case .failed: "failed"
            case .cancelled: "cancelled"
            case .resync: "resync"
            case .sharing: "sharing"
            case .ownershipGranted: "ownership-granted"
            case .staleTimer: "stale-timer"
            case .ignored: "ignored"
            }
        }
    }

    public var intent: ConnectionIntentID
    public var kind: Kind
    /// The round (1-based; 0 before the first round).
    public var attempt: Int
    /// The strategy being tried, when one is.
    public var strategy: Strategy?
    public var failure: ConnectionFailure?

    public init(intent: ConnectionIntentID, kind: Kind, attempt: Int, strategy: Strategy?, failure: ConnectionFailure? = nil) {
        self.intent = intent
        self.kind = kind
        self.attempt = attempt
        self.strategy = strategy
        self.failure = failure
    }

    /// The structured journal fields of this decision (values as strings):
    /// `RELINK_RESTORE_ID`, `RELINK_PERIPHERAL`, `RELINK_DECISION`,
    /// `RELINK_ATTEMPT`, and when known `RELINK_STRATEGY`, `RELINK_ERROR`
    /// (the error name), `RELINK_ERROR_CLASS`, `RELINK_ERROR_MESSAGE`,
    /// `RELINK_ADDRESS`.
    public var journalFields: [String: String] {
        var fields: [String: String] = .journal([
            .restoreID: intent.identifier.rawValue,
            .peripheral: intent.peripheral.description,
            .decision: kind.name,
            .attempt: String(attempt),
        ])
        if let strategy { fields[JournalField.strategy.rawValue] = strategy.rawValue }
        if let failure {
            fields[JournalField.error.rawValue] = failure.errorName
            fields[JournalField.errorClass.rawValue] = failure.failureClass.rawValue
            if !failure.message.isEmpty { fields[JournalField.errorMessage.rawValue] = failure.message }
        }
        switch kind {
        case .knownDeviceFound(let address), .candidateChosen(let address), .scanMatched(let address),
             .connecting(let address), .backgroundAutoConnect(let address):
            fields[JournalField.address.rawValue] = address.string
        default:
            break
        }
        return fields
    }

    public var description: String {
        var text = "\(intent) attempt=\(attempt) \(kind.name)"
        if let strategy { text += " strategy=\(strategy.rawValue)" }
        switch kind {
        case .strategySkipped(let reason): text += " reason=\(reason)"
        case .knownDeviceFound(let address), .candidateChosen(let address), .scanMatched(let address),
             .connecting(let address), .backgroundAutoConnect(let address):
            text += " address=\(address.string)"
        case .ambiguousCandidates(let count): text += " candidates=\(count)"
        case .backingOff(let interval): text += " interval=\(interval)"
        case .connected(let route): text += " route=\(route.rawValue)"
        case .sharing(let owner): text += " owner=\(owner)"
        case .staleTimer(let token): text += " token=\(token)"
        case .ignored(let input): text += " input=\(input)"
        default: break
        }
        if let failure { text += " error=\(failure)" }
        return text
    }
}
