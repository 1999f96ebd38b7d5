import Foundation
import GRDB
import RelinkModel

/// Decoding of outbox events read through GRDB, and the strategy list;
/// the other tables are decoded by ``StateLoader`` (``RawColumns``). A value the schema's CHECKs should have
/// prevented raises `StoreError.corruptRow`.
enum RowDecoding {
    static func identifier(_ text: String) throws -> RestoreIdentifier {
        do { return try RestoreIdentifier(text) } catch { throw StoreError.corruptRow("restore identifier") }
    }

    static func enumValue<E: RawRepresentable<String>>(_ text: String, _ column: String) throws -> E {
        guard let value = E(rawValue: text) else { throw StoreError.corruptRow(column) }
        return value
    }

    static let defaultStrategyText = storedText(Strategy.defaultOrder)

    /// The stored form of a strategy list: stored names, comma-separated.
    static func storedText(_ strategies: [Strategy]) -> String {
        strategies.map(\.storedName).joined(separator: ",")
    }

    /// Parses a comma-separated strategy list (the default order without splitting).
    static func strategyList(_ text: String) throws -> [Strategy] {
        if text == defaultStrategyText { return Strategy.defaultOrder }
        return try text.split(separator: ",").map {
            guard let strategy = Strategy(storedName: $0) else { throw StoreError.corruptRow("connection_intent.strategies") }
            return strategy
        }
    }

    /// The stored form of adapter roles: their names, comma-separated (empty for none).
    static func storedText(_ roles: [AdapterRole]) -> String {
        roles.map(\.rawValue).joined(separator: ",")
    }

    /// Parses a stored role list.
    static func roleList(_ text: String) throws(StoreError) -> [AdapterRole] {
        var roles: [AdapterRole] = []
        for name in text.split(separator: ",") {
            guard let role = AdapterRole(rawValue: String(name)) else { throw .corruptRow("adapter_state.roles") }
            roles.append(role)
        }
        return roles
    }

    /// `outbox_event` columns: identifier, seq, kind, payload, created_at.
    static func event(_ row: Row) throws -> OutboxEvent {
        OutboxEvent(identifier: try identifier(row[0]), sequence: row[1], kind: row[2], payload: row[3],
                    createdAt: Date(storedMilliseconds: row[4]))
    }
}
