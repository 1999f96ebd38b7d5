import DBus
import Foundation
import RelinkAPI
import RelinkClient

/// The JSON forms of the library's values (the `--json` documents). Every
/// key is camelCase (``JSONKey``): D-Bus property names and the API's
/// `a{sv}` option names are turned into JSON keys here, once.
enum JSONForms {
    /// A D-Bus value as JSON: numbers, strings, lists, objects; byte arrays
    /// as hex. The names of an `a{sv}` (relink's option dictionaries,
    /// snake_case on D-Bus) become JSON keys; other dictionaries' keys are data.
    static func value(_ v: DBusValue) -> Any {
        switch v.unwrapped {
        case .byte(let x): Int(x)
        case .boolean(let x): x
        case .int16(let x): Int(x)
        case .uint16(let x): Int(x)
        case .int32(let x): Int(x)
        case .uint32(let x): Int(x)
        case .int64(let x): x
        case .uint64(let x): x
        case .double(let x): x.isFinite ? x : 0
        case .string(let x): x
        case .objectPath(let p): p.rawValue
        case .signature(let s): s.rawValue
        case .unixFD: NSNull()
        case .array(.byte, let items): RelinkArguments.hex(items.compactMap { if case .byte(let b) = $0 { b } else { nil } })
        case .array(_, let items): items.map(value)
        case .dictionary(.string, .variant, let entries):
            Dictionary(entries.map { (JSONKey.fromWords($0.key.stringValue ?? ""), value($0.value)) }, uniquingKeysWith: { _, b in b })
        case .dictionary(_, _, let entries):
            Dictionary(entries.map { (($0.key.stringValue ?? "\(value($0.key))"), value($0.value)) }, uniquingKeysWith: { _, b in b })
        case .structure(let fields): fields.map(value)
        case .variant(let inner): value(inner)
        }
    }

    /// A D-Bus value as people read it on a line: a string or number as
    /// itself, a list or dictionary as JSON text (never a Swift literal).
    static func text(_ v: DBusValue) -> String {
        let json = value(v)
        if json is [Any] || json is [String: Any] { return Output.jsonText(json) }
        return "\(json)"
    }

    /// D-Bus properties as a JSON object, each under its name as a JSON
    /// key (`ScanServices` as `scanServices`).
    static func properties(_ props: [String: DBusValue]) -> [String: Any] {
        Dictionary(props.map { (JSONKey.fromMemberName($0.key), value($0.value)) }, uniquingKeysWith: { _, b in b })
    }

    /// A value of the wire contract (``StatusDocument``'s parts) as the
    /// JSON object relinkd wrote it as.
    static func encoded(_ value: some Encodable) -> Any {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return NSNull() }
        return Output.parsed(String(decoding: data, as: UTF8.self))
    }

    /// An event: `sequence`, `kind` and its parsed `payload`.
    static func event(_ e: RelinkClientEvent) -> [String: Any] {
        ["sequence": e.sequence, "kind": e.kind.rawValue, "payload": Output.parsed(e.payloadJSON)]
    }

    /// `register`'s document: the restored state, its `a{sv}` names as JSON keys.
    static func restored(_ s: RelinkRestoredState, identifier: String, object: String) -> [String: Any] {
        var document: [String: Any] = [
            "identifier": identifier, "object": object, "new": s.isNew,
            "peripherals": s.peripherals.map { p in
                [
                    "object": p.object, "id": p.id, "address": p.address, "state": p.state, "services": p.services,
                    "subscriptions": p.subscriptions.map { ["service": $0.service, "characteristic": $0.characteristic] },
                    "name": p.name,
                ] as [String: Any]
            },
            "scanServices": s.scanServices, "scanOptions": ["allowDuplicates": s.allowDuplicates, "dataPrefixes": s.scanDataPrefixes.sorted().map(\.text)] as [String: Any],
            "scanning": s.scanning,
            "lastSequence": s.lastSequence, "acknowledged": s.acknowledged, "droppedEvents": s.droppedEvents,
        ]
        if let reason = s.launchReason {
            document["launchReason"] = ["busName": reason.busName, "identifiers": reason.identifiers.map(\.rawValue), "events": reason.events] as [String: Any]
        }
        if let adapter = s.adapterStatus {
            document["adapterState"] = adapter.state.rawValue
            document["adapterRoles"] = adapter.roles.map(\.rawValue)
        }
        return document
    }

    /// One entry of `peripherals --json`.
    static func peripheral(_ p: RelinkPeripheral) -> [String: Any] {
        [
            "object": p.object, "id": p.id, "address": p.address, "addressType": p.addressType, "adapter": p.adapter,
            "advertisingName": p.advertisingName, "advertisingNameSeen": p.advertisingNameSeen, "gapName": p.gapName,
            "gapNameSeen": p.gapNameSeen, "name": p.name, "nameSource": p.nameSource, "connected": p.connected,
            "rssi": Int(p.rssi), "services": p.services, "lastSeen": p.lastSeen,
            "mtu": Int(p.mtu), "maximumWriteWithResponse": Int(p.maximumWriteWithResponse),
            "maximumWriteWithoutResponse": Int(p.maximumWriteWithoutResponse),
            "paired": p.paired, "bonded": p.bonded, "trusted": p.trusted,
        ]
    }
}
