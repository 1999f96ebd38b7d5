public import DBus
public import RelinkModel

/// Advertising-data prefixes as the API carries them (docs/api/Central1.md,
/// `Scan` and `Connect`): two options of a method's `a{sv}`, one per kind,
/// each an array of structures (key, prefix, mask; an empty mask is none):
///
/// * manufacturer data: `a(qayay)`: company ID, prefix, mask;
/// * service data: `a(sayay)`: service UUID, prefix, mask.
///
/// relinkd reads them, the client library writes them, and relinkd shows a
/// scan's in `Register`'s `scan_options` and `Central1.ScanOptions` in the
/// same form. The rule and the limits are ``AdvertisingDataPrefix``'s.
public enum DataPrefixOptions {
    /// `Scan`'s option keys (and `scan_options`'), by kind.
    public static let scanKeys: [AdvertisingDataPrefix.Kind: String] = [.manufacturer: "manufacturer_data", .service: "service_data"]
    /// `Connect`'s match-rule option keys, by kind.
    public static let matchKeys: [AdvertisingDataPrefix.Kind: String] = [.manufacturer: "match_manufacturer_data", .service: "match_service_data"]
    /// Most prefixes one scan or match rule may have (both kinds together).
    public static let maximumCount = 16

    /// The D-Bus type of one kind's option.
    public static func type(of kind: AdvertisingDataPrefix.Kind) -> DBusType {
        .array(.structure([kind == .manufacturer ? .uint16 : .string, .array(.byte), .array(.byte)]))
    }

    /// The options for `prefixes` under `keys` (a kind with none is left out).
    public static func options(_ prefixes: some Sequence<AdvertisingDataPrefix>, keys: [AdvertisingDataPrefix.Kind: String]) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        for kind in AdvertisingDataPrefix.Kind.allCases {
            let items = prefixes.filter { $0.field.kind == kind }.sorted().map { prefix -> DBusValue in
                let key: DBusValue = switch prefix.field {
                case .manufacturer(let company): .uint16(company)
                case .service(let uuid): .string(uuid.string)
                }
                return .structure([key, .array(.byte, prefix.bytes.map { .byte($0) }), .array(.byte, (prefix.mask ?? []).map { .byte($0) })])
            }
            guard !items.isEmpty, let name = keys[kind], case .array(let element) = type(of: kind) else { continue }
            out[name] = .array(element, items)
        }
        return out
    }

    /// Reads the prefixes under `keys` in a method's options (absent: none).
    /// - Throws: `InvalidArguments` naming the option: a
    ///   wrong type, a bad UUID, more than ``maximumCount`` prefixes, or a
    ///   prefix the model refuses (longer than any advertisement carries,
    ///   a mask of another length).
    public static func prefixes(in options: [String: DBusValue], keys: [AdvertisingDataPrefix.Kind: String]) throws(RelinkError) -> Set<AdvertisingDataPrefix> {
        var result: Set<AdvertisingDataPrefix> = []
        for kind in AdvertisingDataPrefix.Kind.allCases {
            guard let name = keys[kind], let value = options[name]?.unwrapped else { continue }
            guard case .array(_, let items) = value, value.type == type(of: kind) else {
                throw RelinkError(.invalidArguments, "\(name) must be \(type(of: kind).signature)")
            }
            for item in items {
                guard case .structure(let members) = item, members.count == 3,
                      case .array(_, let prefixBytes) = members[1], case .array(_, let maskBytes) = members[2] else {
                    throw RelinkError(.invalidArguments, "\(name) must be \(type(of: kind).signature)")
                }
                let bytes = prefixBytes.compactMap { if case .byte(let b) = $0 { b } else { nil } }
                let mask = maskBytes.compactMap { if case .byte(let b) = $0 { b } else { nil } }
                do {
                    let field: AdvertisingDataPrefix.Field
                    switch members[0] {
                    case .uint16(let company): field = .manufacturer(company)
                    case .string(let text): field = .service(try BluetoothUUID(parsing: text))
                    default: throw RelinkError(.invalidArguments, "\(name) must be \(type(of: kind).signature)")
                    }
                    result.insert(try AdvertisingDataPrefix(field, bytes: bytes, mask: mask.isEmpty ? nil : mask))
                } catch let error as RelinkError {
                    throw error
                } catch {
                    throw RelinkError(.invalidArguments, "\(name): \(error)")
                }
            }
        }
        guard result.count <= maximumCount else {
            throw RelinkError(.invalidArguments, "at most \(maximumCount) data prefixes, got \(result.count)")
        }
        return result
    }
}
