/// The I/O capability an `org.bluez.Agent1` is registered with
/// (`AgentManager1.RegisterAgent`): what the pairing can ask of a user.
/// `Central1.PairWith` takes one for a pairing, `Connect`'s
/// `pairing_capability` one per connection intent (stored with it, for
/// `Pair` and pairing on demand); the raw values are BlueZ's names.
public enum AgentCapability: String, Sendable, Hashable, CaseIterable, Codable {
    /// Shows a passkey only.
    case displayOnly = "DisplayOnly"
    /// Shows a passkey and takes yes or no (numeric comparison).
    case displayYesNo = "DisplayYesNo"
    /// Takes a typed passkey only.
    case keyboardOnly = "KeyboardOnly"
    /// Takes a typed passkey and shows one.
    case keyboardDisplay = "KeyboardDisplay"
    /// No user interface: Just Works.
    case noInputNoOutput = "NoInputNoOutput"

    /// The five names, comma-separated, for an error message.
    public static let names = allCases.map(\.rawValue).joined(separator: ", ")
}
