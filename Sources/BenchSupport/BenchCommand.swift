/// A control command of the bench (see bench/README.md, "Control protocol").
public struct BenchCommand: Sendable, Equatable {
    public var name: String
    public var arguments: [String: JSONValue]

    public init(_ name: String, _ arguments: [String: JSONValue] = [:]) {
        self.name = name
        self.arguments = arguments
    }

    static func forPeripheral(_ name: String, _ peripheral: String,
                              _ more: [String: JSONValue] = [:]) -> Self {
        var args = more
        args["peripheral"] = .string(peripheral)
        return .init(name, args)
    }

    public static let ping = Self("ping")
    public static let status = Self("status")
    /// Power the peripheral's adapter off: links drop, Connect fails.
    public static func outOfRange(_ p: String) -> Self { forPeripheral("out_of_range", p) }
    public static func inRange(_ p: String) -> Self { forPeripheral("in_range", p) }
    public static func setAdvName(_ p: String, _ name: String) -> Self {
        forPeripheral("set_adv_name", p, ["name": .string(name)])
    }
    public static func setGapName(_ p: String, _ name: String) -> Self {
        forPeripheral("set_gap_name", p, ["name": .string(name)])
    }
    /// Lock: notify a state ("locked"/"unlocked"); band: one measurement.
    public static func push(_ p: String, state: String? = nil) -> Self {
        forPeripheral("push", p, state.map { ["state": .string($0)] } ?? [:])
    }
    public static func pushValue(_ p: String, hex: String) -> Self {
        forPeripheral("push", p, ["value": .string(hex)])
    }
    public static func startStream(_ p: String, rate: Double? = nil) -> Self {
        forPeripheral("start_stream", p, rate.map { ["rate": .number($0)] } ?? [:])
    }
    public static func stopStream(_ p: String) -> Self { forPeripheral("stop_stream", p) }
    public static func setRate(_ p: String, _ rate: Double) -> Self {
        forPeripheral("set_rate", p, ["rate": .number(rate)])
    }
    public static func setRSSI(_ p: String, _ rssi: Int, noise: Int = 0) -> Self {
        forPeripheral("set_rssi", p, ["rssi": .number(Double(rssi)), "noise": .number(Double(noise))])
    }
    /// Patch 26: what the peripheral demands of the central's agent to pair
    /// (`just-works`, `confirmation`, `passkey`) and the passkey it shows.
    public static func setPairingMethod(_ p: String, _ method: String, passkey: Int = 0) -> Self {
        forPeripheral("set_pairing_method", p, ["method": .string(method), "passkey": .number(Double(passkey))])
    }
    public static func setTiming(connectTimeout: Double, supervisionTimeout: Double) -> Self {
        .init("set_timing", ["connect_timeout": .number(connectTimeout),
                             "supervision_timeout": .number(supervisionTimeout)])
    }
    public static func get(_ p: String) -> Self { forPeripheral("get", p) }
    /// SIGKILL BlueZoo and start it again; replies once peripherals re-registered.
    public static let restartBlueZ = Self("restart_bluez")
    public static func centralPower(_ on: Bool) -> Self { .init("central_power", ["on": .bool(on)]) }
    public static func powerCycleCentral(offSeconds: Double = 0.2) -> Self {
        .init("power_cycle_central", ["off_seconds": .number(offSeconds)])
    }
    public static func killPeripheral(_ p: String) -> Self { forPeripheral("kill_peripheral", p) }
    public static func startPeripheral(_ p: String) -> Self { forPeripheral("start_peripheral", p) }
}

/// The bench's answer to a command that succeeded: the reply's fields.
public struct BenchReply: Sendable, Equatable {
    public let fields: [String: JSONValue]
    public subscript(key: String) -> JSONValue? { fields[key] }
}
