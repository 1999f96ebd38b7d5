public import RelinkModel

/// What relinkd does with a remote central's request to a published
/// characteristic: answer it itself, or hand it to the program. Pure: the
/// daemon asks, then carries the decision out.
public enum PeripheralRequestPolicy {
    /// The decision for a read.
    public enum Read: Sendable, Hashable {
        /// relinkd answers with these bytes (the value from the offset on).
        case answer([UInt8])
        /// The program is asked (a `read-request` event).
        case forward
        /// relinkd answers with an ATT error.
        case refuse(ATTError)
    }

    /// The decision for a write.
    public enum Write: Sendable, Hashable {
        /// The program is asked (a `write-request` event with a request
        /// number) and the central waits for its answer.
        case forward
        /// The write goes to the store as a `write-request` event with no
        /// request number, and the central's answer is success once it is
        /// committed (the program reads it when it comes back).
        case commitThenAccept
        /// relinkd answers with an ATT error.
        case refuse(ATTError)
    }

    /// A read of `key` at `offset`: a static value is always answered by
    /// relinkd (the program is never asked, CoreBluetooth's rule); with a
    /// program attached, any other value is its to give; without one, a
    /// cacheable characteristic's last value is answered, and anything else
    /// is ``ATTError/unlikelyError``.
    public static func read(_ key: CharacteristicKey, offset: Int, in record: PeripheralManagerRecord, clientAttached: Bool) -> Read {
        guard let characteristic = record.characteristic(key) else { return .refuse(.requestNotSupported) }
        guard characteristic.properties.contains(.read) else { return .refuse(.readNotPermitted) }
        if let value = characteristic.value { return slice(value, from: offset) }
        if clientAttached { return .forward }
        if characteristic.cacheable, let cached = record.cachedValues[key] { return slice(cached, from: offset) }
        return .refuse(.unlikelyError)
    }

    /// A write of `key`: never to a static value or a characteristic with
    /// no write property; with a program attached it is forwarded when the
    /// central waits for a response, and stored (then accepted) otherwise;
    /// without one, always stored then accepted.
    public static func write(_ key: CharacteristicKey, value: [UInt8], offset: Int, withResponse: Bool,
                             in record: PeripheralManagerRecord, clientAttached: Bool) -> Write {
        guard let characteristic = record.characteristic(key) else { return .refuse(.requestNotSupported) }
        guard characteristic.value == nil,
              !characteristic.properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites]) else {
            return .refuse(.writeNotPermitted)
        }
        guard offset >= 0, offset <= maximumAttributeValueBytes else { return .refuse(.invalidOffset) }
        guard offset + value.count <= maximumAttributeValueBytes else { return .refuse(.invalidAttributeValueLength) }
        return clientAttached && withResponse ? .forward : .commitThenAccept
    }

    private static func slice(_ value: [UInt8], from offset: Int) -> Read {
        guard offset >= 0, offset <= value.count else { return .refuse(.invalidOffset) }
        return .answer(Array(value[offset...]))
    }
}
