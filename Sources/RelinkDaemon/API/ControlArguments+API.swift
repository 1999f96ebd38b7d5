import DBus
import Foundation
import Restoration
import RelinkModel
import RelinkAPI

/// A peripheral as a `Central1` method names it: an address or a relink UUID.
enum PeripheralRef: Sendable, Hashable, CustomStringConvertible {
    case address(BluetoothAddress)
    case id(PeripheralID)

    var description: String {
        switch self {
        case .address(let a): a.string
        case .id(let id): id.description
        }
    }
}

// Argument checks of the client API, beside Control1's.
extension ControlArguments {
    /// `AA:BB:CC:DD:EE:FF` or a peripheral UUID.
    func peripheral(_ index: Int, kind: BluetoothAddress.Kind = .public) throws(RelinkError) -> PeripheralRef {
        try Self.peripheral(try string(index, "peripheral"), kind: kind)
    }

    /// `AA:BB:CC:DD:EE:FF` or a peripheral UUID, from its text.
    static func peripheral(_ text: String, kind: BluetoothAddress.Kind = .public) throws(RelinkError) -> PeripheralRef {
        if text.utf8.count == 17, let address = try? BluetoothAddress(parsing: text.uppercased(), kind: kind) { return .address(address) }
        if text.utf8.count == 36, let uuid = UUID(uuidString: text) { return .id(PeripheralID(uuid)) }
        throw RelinkError(.invalidArguments, "peripheral must be an address AA:BB:CC:DD:EE:FF or a peripheral UUID, got \(String(text.prefix(64)).debugDescription)")
    }

    /// A service and characteristic pair at `index` and `index + 1`.
    func characteristic(_ index: Int) throws(RelinkError) -> CharacteristicKey {
        CharacteristicKey(service: try uuid(index, "service"), characteristic: try uuid(index + 1, "characteristic"))
    }

    /// An `ay` of at most `limit` bytes.
    func bytes(_ index: Int, _ name: String, limit: Int) throws(RelinkError) -> [UInt8] {
        guard case .array(.byte, let items) = values[index] else { throw RelinkError(.invalidArguments, "\(name) must be an array of bytes (ay)") }
        guard items.count <= limit else { throw RelinkError(.invalidArguments, "\(name) is \(items.count) bytes, at most \(limit) are allowed") }
        return items.map { if case .byte(let b) = $0 { b } else { 0 } }
    }

    /// An `aay` of `count` values, each of at most `limit` bytes.
    func byteArrays(_ index: Int, _ name: String, count: ClosedRange<Int>, limit: Int) throws(RelinkError) -> [[UInt8]] {
        guard case .array(.array(.byte), let items) = values[index] else { throw RelinkError(.invalidArguments, "\(name) must be an array of byte arrays (aay)") }
        guard count.contains(items.count) else {
            throw RelinkError(.invalidArguments, "\(name) has \(items.count) values, \(count.lowerBound) to \(count.upperBound) are allowed")
        }
        var arrays: [[UInt8]] = []
        for (n, item) in items.enumerated() {
            guard case .array(.byte, let bytes) = item else { throw RelinkError(.invalidArguments, "\(name) must be an array of byte arrays (aay)") }
            guard bytes.count <= limit else { throw RelinkError(.invalidArguments, "\(name)[\(n)] is \(bytes.count) bytes, at most \(limit) are allowed") }
            arrays.append(bytes.map { if case .byte(let b) = $0 { b } else { 0 } })
        }
        return arrays
    }

    func uint32(_ index: Int, _ name: String) throws(RelinkError) -> UInt32 {
        guard case .uint32(let v) = values[index] else { throw RelinkError(.invalidArguments, "\(name) must be a uint32 (u)") }
        return v
    }
}
