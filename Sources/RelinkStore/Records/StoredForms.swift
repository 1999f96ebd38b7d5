import Foundation
import RelinkModel

// How model values are stored: UUIDs (peripheral identifiers, Bluetooth
// UUIDs) as 16-byte BLOBs in the byte order of their text form, so that BLOB
// order is text order; UUID lists as those BLOBs concatenated; strategies by
// the names of State/README.md. The types themselves live in RelinkModel.

extension BluetoothUUID {
    /// The stored form: 16 bytes.
    var storedBlob: Data { Data(bytes) }
}

extension PeripheralID {
    /// The stored form: 16 bytes.
    var storedBlob: Data { uuid.storedBlob }
    /// The text form used in store errors.
    var storedText: String { uuid.storedText }
}

extension [PeripheralID] {
    /// The stored form of a peripheral list: the 16-byte values, concatenated.
    var storedList: Data {
        var data = Data(capacity: count * 16)
        for peripheral in self { data.append(peripheral.storedBlob) }
        return data
    }

    /// Parses the stored form.
    /// - Throws: `StoreError.corruptRow` when its length is not a multiple of 16.
    static func fromStoredList(_ data: UnsafeRawBufferPointer, column: String) throws(StoreError) -> [PeripheralID] {
        guard data.count % 16 == 0 else { throw .corruptRow("bad peripheral list in \(column)") }
        return stride(from: 0, to: data.count, by: 16).compactMap { UUID(storedBlob: data, offset: $0).map(PeripheralID.init) }
    }
}

extension [BluetoothUUID] {
    /// The stored form of a UUID list: the 16-byte values, concatenated.
    var storedList: Data {
        var data = Data(capacity: count * 16)
        for uuid in self { data.append(contentsOf: uuid.bytes) }
        return data
    }

    /// Parses the stored form.
    /// - Throws: `StoreError.corruptRow` when its length is not a multiple of 16.
    static func fromStoredList(_ data: UnsafeRawBufferPointer, column: String) throws(StoreError) -> [BluetoothUUID] {
        guard data.count % 16 == 0 else { throw .corruptRow("bad UUID list in \(column)") }
        var result: [BluetoothUUID] = []
        result.reserveCapacity(data.count / 16)
        var offset = 0
        while offset < data.count, let value = BluetoothUUID(bytes: data, offset: offset) {
            result.append(value)
            offset += 16
        }
        return result
    }
}

extension Collection<AdvertisingDataPrefix> {
    /// The stored form (`scan_intent.data_prefixes`,
    /// `connection_intent.match_data_prefixes`): the text forms, sorted,
    /// separated by spaces; empty for none.
    var storedText: String { sorted().map(\.text).joined(separator: " ") }
}

extension AdvertisingDataPrefix {
    /// Parses the stored form.
    /// - Throws: `StoreError.corruptRow` naming `column` when a prefix does not parse.
    static func fromStoredText(_ text: String?, column: String) throws(StoreError) -> Set<AdvertisingDataPrefix> {
        var result: Set<AdvertisingDataPrefix> = []
        for part in (text ?? "").split(separator: " ") {
            do { result.insert(try AdvertisingDataPrefix(parsing: String(part))) } catch { throw .corruptRow("bad data prefix in \(column)") }
        }
        return result
    }
}

extension Strategy {
    /// The stored name (`connection_intent.strategies`, comma-separated).
    var storedName: String {
        switch self {
        case .knownIdentifier: "known-identifier"
        case .alreadyConnected: "already-connected"
        case .scan: "scan"
        }
    }

    /// The strategy of a stored name, nil for an unknown one.
    init?(storedName: Substring) {
        switch storedName {
        case "known-identifier": self = .knownIdentifier
        case "already-connected": self = .alreadyConnected
        case "scan": self = .scan
        default: return nil
        }
    }
}
