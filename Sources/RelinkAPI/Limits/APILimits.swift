import RelinkModel
/// The limits of relinkd's methods (docs/api/errors.md, "Limits"): relinkd
/// refuses what breaks them with `InvalidArguments`, and the client library
/// checks them before sending, so both say the same.
public enum APILimits {
    /// Longest string argument (address, UUID, option value), in bytes.
    public static let maximumStringBytes = 1024
    /// Longest UUID list (`Scan` services, `Connect` `services`).
    public static let maximumUUIDs = 64
    /// The most peripherals one `RetrievePeripherals` names.
    public static let maximumRetrieved = 256
    /// The most peripherals one `RegisterForConnectionEvents` names.
    public static let maximumConnectionEventPeripherals = 256
    /// Longest `Write` value, in bytes: the longest attribute value (a long write with response).
    public static let maximumWriteBytes = WriteLimits.maximumAttributeLength
    /// Longest `Write` value argument relinkd reads; a longer one is
    /// `InvalidArguments`, one above the link's largest value but within
    /// this is `ValueTooLong` naming the largest.
    public static let maximumWriteArgumentBytes = 4096
    /// Most events one `Events` call returns.
    public static let maximumEventsPage: UInt32 = 10_000
    /// Most keys of an option dictionary.
    public static let maximumOptionKeys = 16
    /// Longest `Connect` timeout, in seconds.
    public static let maximumConnectTimeout: Double = 86_400
    /// The bound of unacknowledged events an identifier may ask for (`event_limit`).
    public static let eventLimits: ClosedRange<Int> = 1...100_000
    /// The bound when none is asked for.
    public static let defaultEventLimit = 1000
}
