import DBus
import Foundation
import RelinkClient

/// The JSON forms of the library's values (the `--json` documents).
enum JSONForms {
    /// A D-Bus value as JSON: numbers, strings, lists, objects; byte arrays as hex.
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
        case .dictionary(_, _, let entries):
            Dictionary(entries.map { (($0.key.stringValue ?? "\(value($0.key))"), value($0.value)) }, uniquingKeysWith: { _, b in b })
        case .structure(let fields): fields.map(value)
        case .variant(let inner): value(inner)
        }
    }

    /// D-Bus properties as a JSON object under their D-Bus names.
    static func properties(_ props: [String: DBusValue]) -> [String: Any] {
        props.mapValues(value)
    }

    /// An event: `sequence`, `kind` and its parsed `payload`.
    static func event(_ e: RelinkClientEvent) -> [String: Any] {
        ["sequence": e.sequence, "kind": e.kind.rawValue, "payload": Output.parsed(e.payloadJSON)]
    }

    /// `register`'s document: the restored state under the API's key names.
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
            "scan_services": s.scanServices, "scan_options": ["allow_duplicates": s.allowDuplicates, "data_prefixes": s.scanDataPrefixes.sorted().map(\.text)] as [String: Any],
            "scanning": s.scanning,
            "last_sequence": s.lastSequence, "acknowledged": s.acknowledged, "dropped_events": s.droppedEvents,
        ]
        if let reason = s.launchReason {
            document["launch_reason"] = ["bus_name": reason.busName, "identifiers": reason.identifiers.map(\.rawValue), "events": reason.events] as [String: Any]
        }
        if let adapter = s.adapterStatus {
            document["adapter_state"] = adapter.state.rawValue
            document["adapter_roles"] = adapter.roles.map(\.rawValue)
        }
        return document
    }

    /// One entry of `peripherals --json`.
    static func peripheral(_ p: RelinkPeripheral) -> [String: Any] {
        [
            "object": p.object, "id": p.id, "address": p.address, "address_type": p.addressType, "adapter": p.adapter,
            "advertising_name": p.advertisingName, "advertising_name_seen": p.advertisingNameSeen, "gap_name": p.gapName,
            "gap_name_seen": p.gapNameSeen, "name": p.name, "name_source": p.nameSource, "connected": p.connected,
            "rssi": Int(p.rssi), "services": p.services, "last_seen": p.lastSeen,
            "mtu": Int(p.mtu), "maximum_write_with_response": Int(p.maximumWriteWithResponse),
            "maximum_write_without_response": Int(p.maximumWriteWithoutResponse),
            "paired": p.paired, "bonded": p.bonded, "trusted": p.trusted,
        ]
    }
}
