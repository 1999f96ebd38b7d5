import Testing
@testable import Restoration
import RelinkModel

typealias Machine = ConnectionStateMachine<ManualClock>
typealias Action = Machine.Action

/// Test constants; the literals are valid, so parsing cannot fail.
enum Fixtures {
    static func identifier(_ value: String) -> RestoreIdentifier {
        // Literal test constants only.
        try! RestoreIdentifier(value)
    }

    static func address(_ value: String, _ kind: BluetoothAddress.Kind = .public) -> BluetoothAddress {
        try! BluetoothAddress(parsing: value, kind: kind)
    }

    static func uuid(_ value: String) -> BluetoothUUID {
        try! BluetoothUUID(parsing: value)
    }

    static let lockIdentifier = identifier("org.example.lock")
    static let bandIdentifier = identifier("org.example.band")
    static let lockPeripheral = PeripheralID()
    static let lockAddress = address("C0:11:22:33:44:55")
    static let otherAddress = address("C0:11:22:33:44:66")
    static let lockService = uuid("0000fff0-0000-1000-8000-00805f9b34fb")
    static let heartRate = uuid("180D")
    static let lockIntent = ConnectionIntentID(identifier: lockIdentifier, peripheral: lockPeripheral)

    /// Options with no jitter, so intervals can be compared exactly.
    static func options(
        strategies: [Strategy] = Strategy.defaultOrder,
        deadline: ConnectionDeadline = .pendingUntilCancelled,
        match: MatchRule = MatchRule(),
        candidateChoice: CandidateChoice = .requireUnique,
        reconnect: Bool = true,
        jitter: Double = 0
    ) -> ConnectionOptions {
        try! ConnectionOptions(
            strategies: strategies, deadline: deadline,
            backoff: BackoffPolicy(jitter: jitter),
            services: [lockService], match: match,
            candidateChoice: candidateChoice, reconnectAfterDisconnect: reconnect)
    }
}

/// A random source that always returns the same value.
struct FixedRandom: RandomSource {
    var value: Double
    mutating func nextUnit() -> Double { value }
}
