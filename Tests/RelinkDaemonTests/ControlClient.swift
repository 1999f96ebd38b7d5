import BenchSupport
import DBus
import Foundation

/// Calls relinkd's `org.relink.Control1` from the test, over the bench's bus.
struct ControlClient {
    let connection: Connection
    static let path = try! ObjectPath("/org/relink/control")

    /// One outbox event.
    struct Event: Sendable, Hashable {
        var seq: UInt64
        var kind: String
        var payload: String

        /// How the link came up, for `connected` and `restored`
        /// (`knownIdentifier`, `alreadyConnected`, `scan`,
        /// `backgroundAutoConnect`, `sharedLink`).
        var route: String? {
            guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
                  let inner = object[kind] as? [String: Any] else { return nil }
            return inner["route"] as? String
        }

        /// The notified value's bytes, for `value-notified`.
        var value: [UInt8]? {
            guard kind == "value-notified",
                  let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
                  let inner = object["valueNotified"] as? [String: Any],
                  let bytes = inner["value"] as? [Int] else { return nil }
            return bytes.map { UInt8(truncatingIfNeeded: $0) }
        }
    }

    @discardableResult
    func call(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: "org.relink", path: Self.path, interface: "org.relink.Control1", method: method,
                                  arguments: arguments, timeout: .seconds(10)).body
    }

    /// Waits until relinkd owns its name and answers `Status`.
    func waitUntilUp(timeout: Duration = .seconds(20)) async throws {
        try await eventually(timeout: timeout, "relinkd to answer Status") { (try? await status()) != nil }
    }

    func status() async throws -> [String: Any] {
        guard case .string(let text)? = try await call("Status").first,
              let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    /// Every connection intent in `Status`, of every identifier.
    func connections() async throws -> [[String: Any]] {
        let ids = try await status()["identifiers"] as? [[String: Any]] ?? []
        return ids.flatMap { $0["connections"] as? [[String: Any]] ?? [] }
    }

    /// The state of the first connection intent of `id`, e.g. `connected`.
    func connectionState(_ id: String) async throws -> String? {
        let ids = try await status()["identifiers"] as? [[String: Any]] ?? []
        let entry = ids.first { $0["id"] as? String == id }
        return (entry?["connections"] as? [[String: Any]])?.first?["state"] as? String
    }

    func register(_ id: String) async throws { try await call("Register", [.string(id)]) }

    @discardableResult
    func connect(_ id: String, _ address: String, services: [String], extra: [DBusValue.DictionaryEntry] = []) async throws -> String {
        let options = DBusValue.dictionary(key: .string, value: .variant, [
            .init(.string("services"), .variant(.array(.string, services.map { .string($0) }))),
        ] + extra)
        guard case .string(let peripheral)? = try await call("Connect", [.string(id), .string(address), options]).first else { return "" }
        return peripheral
    }

    func subscribe(_ id: String, _ address: String, _ service: String, _ characteristic: String) async throws {
        try await call("Subscribe", [.string(id), .string(address), .string(service), .string(characteristic)])
    }

    func events(_ id: String, after: UInt64 = 0) async throws -> [Event] {
        guard case .array(_, let items)? = try await call("Events", [.string(id), .uint64(after)]).first else { return [] }
        return items.compactMap { item in
            guard case .structure(let fields) = item, fields.count == 3, case .uint64(let seq) = fields[0],
                  case .string(let kind) = fields[1], case .string(let payload) = fields[2] else { return nil }
            return Event(seq: seq, kind: kind, payload: payload)
        }
    }
}
