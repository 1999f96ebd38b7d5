/// How long each step of a strategy may take before the machine moves on.
///
/// Defaults: lookups 5 s; connect 20 s (the kernel's own LE connect timeout;
/// bleak-retry-connector also uses 20 s); services 15 s; scan 15 s.
public struct StepTimeouts: Sendable, Hashable, Codable {
    /// A known-device or already-connected lookup in the BlueZ mirror.
    public var lookup: Duration
    /// From `Device1.Connect` to its reply.
    public var connect: Duration
    /// From the connect reply to `ServicesResolved=true`.
    public var servicesResolved: Duration
    /// A scan strategy waiting for a matching advertisement.
    public var scan: Duration

    public init(lookup: Duration = .seconds(5), connect: Duration = .seconds(20), servicesResolved: Duration = .seconds(15), scan: Duration = .seconds(15)) {
        self.lookup = lookup
        self.connect = connect
        self.servicesResolved = servicesResolved
        self.scan = scan
    }

    var all: [Duration] { [lookup, connect, servicesResolved, scan] }
}
