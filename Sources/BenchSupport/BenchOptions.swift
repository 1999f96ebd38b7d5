/// What bench to start: peripherals and the simulated BlueZ's behaviour.
public struct BenchOptions: Sendable {
    /// A simulated peripheral: its kind and its name in commands.
    public struct Peripheral: Sendable, Hashable {
        public enum Kind: String, Sendable { case lock, band }
        public var kind: Kind
        public var name: String
        public init(_ kind: Kind, _ name: String) {
            self.kind = kind
            self.name = name
        }
        public static func lock(_ name: String = "lock") -> Self { .init(.lock, name) }
        public static func band(_ name: String = "band") -> Self { .init(.band, name) }
    }

    /// "exported" (BlueZ >= 5.80) or "hidden" (5.66): the GAP service on the central.
    public enum GapService: String, Sendable { case exported, hidden }

    public var peripherals: [Peripheral] = [.lock(), .band()]
    public var gapService: GapService = .exported
    /// Seconds between scan reports.
    public var scanInterval: Double = 0.2
    /// Seconds before Connect to an absent peer fails with `le-connection-abort-by-local`.
    public var connectTimeout: Double = 1.0
    /// Seconds before the central notices a vanished peer.
    public var supervisionTimeout: Double = 0.5
    /// Seconds an unconnected discovered device stays after its last
    /// advertisement (BlueZ's TemporaryTimeout); 0 keeps devices.
    public var temporaryTimeout: Double = 30
    /// Band notifications per second.
    public var bandRate: Double = 2.0
    /// Each lock's state characteristic needs an encrypted (paired) link
    /// (`--lock-security encrypted`, BlueZoo patch 22; issue 24).
    public var encryptedLocks = false
    /// Each lock advertises from a resolvable private address that rotates
    /// at each power-on, bluetoothd restart and `rotate_address`
    /// (`--lock-privacy`, BlueZoo patch 27; issue 24). Combines with
    /// ``encryptedLocks``.
    public var lockPrivacy = false
    /// How long to wait for the ready line.
    public var startTimeout: Duration = .seconds(60)
    /// How long to wait for the reply to a command.
    public var commandTimeout: Duration = .seconds(60)
    /// Keep the bench directory (logs) after stop.
    public var keepDirectory = false
    /// The launcher to run instead of `Bench.launcherPath()`.
    public var launcher: String?

    public init() {}

    public init(peripherals: [Peripheral]) {
        self.peripherals = peripherals
    }

    var arguments: [String] {
        var args: [String] = []
        for p in peripherals { args += ["--\(p.kind.rawValue)", p.name] }
        args += ["--gap-service", gapService.rawValue,
                 "--scan-interval", "\(scanInterval)",
                 "--connect-timeout", "\(connectTimeout)",
                 "--supervision-timeout", "\(supervisionTimeout)",
                 "--temporary-timeout", "\(temporaryTimeout)",
                 "--band-rate", "\(bandRate)"]
        if encryptedLocks { args += ["--lock-security", "encrypted"] }
        if lockPrivacy { args.append("--lock-privacy") }
        if keepDirectory { args.append("--keep-dir") }
        return args
    }
}
