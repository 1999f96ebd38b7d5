import Foundation
import RelinkModel

// The peripheral role's five kinds in format 2 (docs/api/events.md):
// `read-request`, `write-request`, `subscribed`, `unsubscribed` and
// `ready-to-update`, about no peripheral; `central` is the central's address
// or `unknown`.
extension RelinkEvent.Wire {
        static func encodePeripheralManager(_ event: PeripheralManagerEvent, in body: inout KeyedEncodingContainer<Key>) throws {
            switch event {
            case .readRequest(let request, let central, let key, let offset, let mtu):
                try body.encode(request, forKey: .request)
                try body.encode(central, forKey: .central)
                try encodeCharacteristic(key, in: &body)
                try body.encode(offset, forKey: .offset)
                try body.encodeIfPresent(mtu, forKey: .mtu)
            case .writeRequest(let request, let central, let key, let offset, let value, let kind, let mtu):
                try body.encode(request, forKey: .request)
                try body.encode(central, forKey: .central)
                try encodeCharacteristic(key, in: &body)
                try body.encode(offset, forKey: .offset)
                try body.encode(value, forKey: .value)
                try body.encode(kind.withResponse, forKey: .withResponse)
                try body.encode(kind, forKey: .kind)
                try body.encodeIfPresent(mtu, forKey: .mtu)
            case .subscribed(let central, let key), .unsubscribed(let central, let key):
                try body.encode(central, forKey: .central)
                try encodeCharacteristic(key, in: &body)
            case .readyToUpdate:
                break
            }
        }

        static func decodePeripheralManager(_ kind: EventKind, _ body: KeyedDecodingContainer<Key>) throws -> PeripheralManagerEvent {
            switch kind {
            case .readRequest:
                return .readRequest(request: try body.decode(UInt64.self, forKey: .request), central: try body.decode(String.self, forKey: .central),
                                    characteristic: try decodeCharacteristic(body), offset: try body.decode(Int.self, forKey: .offset),
                                    mtu: try body.decodeIfPresent(Int.self, forKey: .mtu))
            case .writeRequest:
                // `kind` is absent from events stored before it existed: `withResponse` tells command from request.
                let withResponse = try body.decode(Bool.self, forKey: .withResponse)
                return .writeRequest(request: try body.decode(UInt64.self, forKey: .request), central: try body.decode(String.self, forKey: .central),
                                     characteristic: try decodeCharacteristic(body), offset: try body.decode(Int.self, forKey: .offset),
                                     value: try body.decode([UInt8].self, forKey: .value),
                                     kind: try body.decodeIfPresent(WriteKind.self, forKey: .kind) ?? (withResponse ? .request : .command),
                                     mtu: try body.decodeIfPresent(Int.self, forKey: .mtu))
            case .subscribed:
                return .subscribed(central: try body.decode(String.self, forKey: .central), characteristic: try decodeCharacteristic(body))
            case .unsubscribed:
                return .unsubscribed(central: try body.decode(String.self, forKey: .central), characteristic: try decodeCharacteristic(body))
            default:
                return .readyToUpdate
            }
        }
}
