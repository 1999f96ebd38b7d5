import ArgumentParser
import DBus
import Foundation
import RelinkAPI
import RelinkClient
import RelinkModel

/// `relinkctl status`: relinkd's version, adapter, readiness and what the caller may see.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show relinkd's state (Manager1 properties and Status).")
    @OptionGroup var global: GlobalOptions

    /// Reads `Manager1`'s properties and prints them with its `Status` document.
    func run() async throws {
        let props = try await global.withManager { manager in try await manager.managerProperties() }
        let status = props["Status"]?.stringValue.map(Output.parsed) ?? [String: Any]()
        if global.json {
            // One document: Manager1's properties under JSON keys, and the
            // Status document's entries beside them (not a second copy under
            // "status"; where both say a thing, Status's word is kept).
            var doc = JSONForms.properties(props.filter { $0.key != Manager1Property.status.rawValue })
            for (key, value) in status as? [String: Any] ?? [:] { doc[key] = value }
            Output.json(doc)
            return
        }
        // First: a store moved aside at start-up means relinkd started EMPTY.
        for file in (status as? [String: Any])?["quarantined"] as? [[String: Any]] ?? [] {
            Output.line("Quarantined: \(file["path"] ?? "?") moved to \(file["movedTo"] ?? "?") (\(file["message"] ?? file["reason"] ?? "?"))"
                        + "; relinkd started with an EMPTY store")
        }
        for key in ["Version", "Adapter", "Ready", "Discovering"] {
            guard let v = props[key] else { continue }
            // One discovery for every scan and every connection that looks
            // for its device: true while no identifier says it scans is no contradiction.
            let why = key == "Discovering" && v.unwrapped == .boolean(true) ? " (for a scan, or a connection looking for its device)" : ""
            Output.line("\(key): \(JSONForms.text(v))\(why)")
        }
        if case .string(let state)? = props[Manager1Property.adapterState.rawValue]?.unwrapped {
            let roles = (props[Manager1Property.adapterRoles.rawValue].map(JSONForms.value) as? [String]) ?? []
            Output.line(Self.adapterStateLine(state, roles: roles))
        }
        let identifiers = (status as? [String: Any])?["identifiers"] as? [[String: Any]] ?? []
        Output.line("Identifiers: \(identifiers.count)")
        for entry in identifiers {
            let connections = entry["connections"] as? [[String: Any]] ?? []
            Output.line("  \(entry["id"] ?? "?"): \(connections.count) connection(s), \(entry["subscriptions"] as? Int ?? 0) subscription(s), scanning \(entry["scanning"] as? Bool ?? false)")
            for c in connections {
                var line = "    \(c["peripheral"] ?? "?") \(c["address"] ?? "") \(c["state"] ?? "")"
                if let attempt = c["attempt"] as? Int, attempt > 0 { line += " attempt \(attempt)" }
                if c["bonded"] as? Bool == true { line += c["identityAddress"] as? Bool == true ? " bonded (identity address)" : " bonded" }
                if let unarmed = c["unarmed"] as? [String], !unarmed.isEmpty {
                    line += ", not armed (no notifications yet): \(unarmed.joined(separator: ", "))"
                }
                if let error = c["lastError"] as? String { line += ", last error: \(error)" }
                Output.line(line)
            }
        }
        // root's view only: relinkd sends `quotas` to root alone.
        if let quotas = (status as? [String: Any])?["quotas"] as? [String: Any] {
            for line in Self.quotaLines(quotas) { Output.line(line) }
        }
        // relinkd's queue of inputs, unbounded by count: how far it ever fell behind.
        if let inbox = (status as? [String: Any])?["inbox"] as? [String: Any], let queued = inbox["queued"] as? Int,
           let highWater = inbox["highWater"] as? Int {
            Output.line("Inbox: \(queued) queued, at most \(highWater) since relinkd started")
        }
    }

    /// The `quotas` section of root's `Status` (docs/relinkd-conf.md): the
    /// bounds, then each user's use against them, by UID; a bound a user
    /// has reached is marked `(full)`: their next call that adds to it is
    /// refused with `QuotaExceeded`.
    static func quotaLines(_ quotas: [String: Any]) -> [String] {
        let bounds = quotas["bounds"] as? [String: Any] ?? [:]
        func limit(_ bound: QuotaBound) -> Int? { bounds[bound.jsonKey] as? Int }
        let names = QuotaBound.allCases
        var lines = ["Quotas (per user but root, /etc/relink/relinkd.conf): "
                     + names.map { "\($0) \(limit($0).map(String.init) ?? "?")" }.joined(separator: ", ")]
        let users = quotas["users"] as? [[String: Any]] ?? []
        if users.isEmpty { lines.append("  no user keeps anything") }
        for user in users {
            let uid = user["uid"] as? Int ?? -1
            let bounded = user["bounded"] as? Bool ?? true
            let use = user["use"] as? [String: Any] ?? [:]
            let amounts = names.map { bound -> String in
                let used = use[bound.jsonKey] as? Int ?? 0
                guard bounded, let max = limit(bound) else { return "\(bound) \(used)" }
                return "\(bound) \(used)/\(max)\(used >= max ? " (full)" : "")"
            }
            lines.append("  \(Self.userName(uid)) (uid \(uid)\(bounded ? "" : ", not bounded by relinkd.conf")): \(amounts.joined(separator: ", "))")
        }
        return lines
    }

    /// The user's name on this machine (relinkd's), or `?` for a UID with none.
    static func userName(_ uid: Int) -> String {
        guard uid >= 0, let entry = getpwuid(uid_t(uid)), let name = entry.pointee.pw_name else { return "?" }
        return String(cString: name)
    }

    /// `identifier`'s entry in the `Status` document of relinkd's
    /// `Manager1` properties (`connections`, `launch`, ...), nil when the
    /// caller does not see it.
    static func entry(of identifier: String, in props: [String: DBusValue]) -> [String: Any]? {
        let status = props["Status"]?.stringValue.map(Output.parsed) as? [String: Any]
        return (status?["identifiers"] as? [[String: Any]])?.first { $0["id"] as? String == identifier }
    }

    /// `AdapterState: poweredOn (roles central, peripheral)`: the one
    /// wording `status` and `register` print the adapter's state in.
    static func adapterStateLine(_ state: String, roles: [String]) -> String {
        "AdapterState: \(state)" + (roles.isEmpty ? "" : " (roles \(roles.joined(separator: ", ")))")
    }
}
