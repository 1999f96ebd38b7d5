/// The bench's ready line: where its bus is and who is on it.
public struct BenchInfo: Sendable, Decodable, Equatable {
    public struct Central: Sendable, Decodable, Equatable {
        public let adapter: String
        public let address: String
    }

    public struct Peripheral: Sendable, Decodable, Equatable {
        public let kind: String
        /// The peripheral's own adapter, e.g. "hci1".
        public let adapter: String
        public let address: String
        /// Its Device1 object on the central, e.g. "/org/bluez/hci0/dev_00_00_00_00_00_02".
        public let devicePath: String
        public let advName: String
        public let gapName: String

        enum CodingKeys: String, CodingKey {
            case kind, adapter, address
            case devicePath = "device_path"
            case advName = "adv_name"
            case gapName = "gap_name"
        }
    }

    /// The private bus, `unix:path=...`: set it as `DBUS_SYSTEM_BUS_ADDRESS`.
    public let bus: String
    /// The bench's temporary directory (removed on stop).
    public let dir: String
    public let central: Central
    public let peripherals: [String: Peripheral]
}
