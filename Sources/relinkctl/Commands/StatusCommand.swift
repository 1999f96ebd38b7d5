import ArgumentParser
import DBus
import RelinkAPI
import RelinkClient

/// `relinkctl status`: relinkd's version, adapter, readiness and what the caller may see.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show relinkd's state (Manager1 properties and Status).")
    @OptionGroup var global: GlobalOptions

    /// Reads `Manager1`'s properties and prints them with its `Status` document.
    func run() async throws {
        let props = try await global.withManager { manager in try await manager.managerProperties() }
        let status = props["Status"]?.stringValue.map(Output.parsed) ?? [String: Any]()
        if global.json {
            var doc = JSONForms.properties(props)
            doc["Status"] = status
            Output.json(doc)
            return
        }
        // First: a store moved aside at start-up means relinkd started EMPTY.
        for file in (status as? [String: Any])?["quarantined"] as? [[String: Any]] ?? [] {
            Output.line("Quarantined: \(file["path"] ?? "?") moved to \(file["moved_to"] ?? "?") (\(file["message"] ?? file["reason"] ?? "?"))"
                        + "; relinkd started with an EMPTY store")
        }
        for key in ["Version", "Adapter", "Ready", "Discovering"] {
            if let v = props[key] { Output.line("\(key): \(JSONForms.value(v))") }
        }
        if case .string(let state)? = props[Manager1Property.adapterState.rawValue]?.unwrapped {
            Output.line("AdapterState: \(state)\(Self.roles(props[Manager1Property.adapterRoles.rawValue]))")
        }
        let identifiers = (status as? [String: Any])?["identifiers"] as? [[String: Any]] ?? []
        Output.line("Identifiers: \(identifiers.count)")
        for entry in identifiers {
            let connections = entry["connections"] as? [[String: Any]] ?? []
            Output.line("  \(entry["id"] ?? "?"): \(connections.count) connection(s), \(entry["subscriptions"] as? Int ?? 0) subscription(s), scanning \(entry["scanning"] as? Bool ?? false)")
            for c in connections {
                var line = "    \(c["peripheral"] ?? "?") \(c["address"] ?? "") \(c["state"] ?? "")"
                if let attempt = c["attempt"] as? Int, attempt > 0 { line += " attempt \(attempt)" }
                if c["bonded"] as? Bool == true { line += c["identity_address"] as? Bool == true ? " bonded (identity address)" : " bonded" }
                if let error = c["last_error"] as? String { line += ", last error: \(error)" }
                Output.line(line)
            }
        }
    }

    /// ` (roles central, peripheral)`, or nothing when relinkd gave none.
    static func roles(_ value: DBusValue?) -> String {
        let names = (value.map(JSONForms.value) as? [String]) ?? []
        return names.isEmpty ? "" : " (roles \(names.joined(separator: ", ")))"
    }
}
