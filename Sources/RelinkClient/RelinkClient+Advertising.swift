public import RelinkModel
import RelinkAPI

// Advertising data for programs (issue 22 item 3): a `discovered` event's
// advertisement and its iBeacon, and a scan for iBeacons, without naming
// the model's types.

extension RelinkClientEvent {
    /// The advertisement of a `discovered` event: address, name, services,
    /// RSSI and ``AdvertisingData`` (manufacturer and service data, TX
    /// power, appearance, flags, raw data).
    public var advertisement: Advertisement? {
        if case .discovered(_, let advertisement)? = payload { return advertisement }
        return nil
    }

    /// The iBeacon a `discovered` event's advertisement carries, when its
    /// manufacturer data of company 0x004C is an iBeacon frame.
    public var iBeacon: IBeacon? { advertisement.flatMap { IBeacon($0.data) } }
}

extension RelinkScanOptions {
    /// A scan that reports iBeacons only (manufacturer data of company
    /// 0x004C starting `02 15`); each again when its frame changes, or
    /// every report with `allowDuplicates`.
    public static func iBeacons(allowDuplicates: Bool = false) -> RelinkScanOptions {
        RelinkScanOptions(allowDuplicates: allowDuplicates, dataPrefixes: [IBeacon.scanPrefix])
    }
}

extension RelinkArguments {
    /// Data prefixes from their text forms without the kind (relinkctl's
    /// `--manufacturer-data 0x004c:0215[/ffff]`, `--service-data feaa:20`),
    /// by the model's parser and the contract's count limit.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): a malformed
    ///   prefix, one longer than any advertisement carries, a mask of
    ///   another length, or too many.
    public static func dataPrefixes(manufacturer: [String], service: [String]) throws(RelinkClientError) -> Set<AdvertisingDataPrefix> {
        var result: Set<AdvertisingDataPrefix> = []
        for (kind, texts) in [(AdvertisingDataPrefix.Kind.manufacturer, manufacturer), (.service, service)] {
            for text in texts {
                do { result.insert(try AdvertisingDataPrefix(parsing: text, as: kind)) } catch { throw .invalid("\(error)") }
            }
        }
        guard result.count <= DataPrefixOptions.maximumCount else {
            throw .invalid("At most \(DataPrefixOptions.maximumCount) data prefixes, got \(result.count).")
        }
        return result
    }
}
