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
        if global.json {
            // One document: Manager1's properties under JSON keys, and the
            // Status document's entries beside them (not a second copy under
            // "status"; where both say a thing, Status's word is kept).
            let status = props[Manager1Property.status.rawValue]?.stringValue.map(Output.parsed) as? [String: Any] ?? [:]
            var doc = JSONForms.properties(props.filter { $0.key != Manager1Property.status.rawValue })
            for (key, value) in status { doc[key] = value }
            Output.json(doc)
            return
        }
        let status = try Self.document(in: props)
        // First: a store moved aside at start-up means relinkd started EMPTY.
        for file in status?.quarantined ?? [] {
            Output.line("Quarantined: \(file.path) moved to \(file.movedTo) (\(file.message)); relinkd started with an EMPTY store")
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
        let identifiers = status?.identifiers ?? []
        Output.line("Identifiers: \(identifiers.count)")
        for entry in identifiers {
            Output.line("  \(entry.id): \(entry.connections.count) connection(s), \(entry.subscriptions) subscription(s), scanning \(entry.scanning)")
            for c in entry.connections {
                var line = "    \(c.peripheral) \(c.address ?? "") \(c.state)"
                if c.attempt > 0 { line += " attempt \(c.attempt)" }
                if c.bonded { line += c.identityAddress ? " bonded (identity address)" : " bonded" }
                if let unarmed = c.unarmed, !unarmed.isEmpty {
                    line += ", not armed (no notifications yet): \(unarmed.joined(separator: ", "))"
                }
                if let error = c.lastError { line += ", last error: \(error)" }
                Output.line(line)
            }
        }
        // root's view only: relinkd sends `quotas` to root alone.
        if let quotas = status?.quotas {
            for line in Self.quotaLines(quotas) { Output.line(line) }
        }
        // relinkd's queue of inputs, unbounded by count: how far it ever fell behind.
        if let inbox = status?.inbox {
            Output.line("Inbox: \(inbox.queued) queued, at most \(inbox.highWater) since relinkd started")
        }
    }

    /// The `quotas` section of root's `Status` (docs/relinkd-conf.md): the
    /// bounds, then each user's use against them, by UID; a bound a user
    /// has reached is marked `(full)`: their next call that adds to it is
    /// refused with `QuotaExceeded`.
    static func quotaLines(_ quotas: StatusDocument.Quotas) -> [String] {
        func limit(_ bound: QuotaBound) -> Int64? { quotas.bounds[bound.jsonKey] }
        let names = QuotaBound.allCases
        var lines = ["Quotas (per user but root, /etc/relink/relinkd.conf): "
                     + names.map { "\($0) \(limit($0).map(String.init) ?? "?")" }.joined(separator: ", ")]
        if quotas.users.isEmpty { lines.append("  no user keeps anything") }
        for user in quotas.users {
            let amounts = names.map { bound -> String in
                let used = user.use[bound.jsonKey] ?? 0
                guard user.bounded, let max = limit(bound) else { return "\(bound) \(used)" }
                return "\(bound) \(used)/\(max)\(used >= max ? " (full)" : "")"
            }
            lines.append("  \(Self.userName(user.uid)) (uid \(user.uid)\(user.bounded ? "" : ", not bounded by relinkd.conf")): \(amounts.joined(separator: ", "))")
        }
        return lines
    }

    /// The user's name on this machine (relinkd's), or `?` for a UID with none.
    static func userName(_ uid: UInt32) -> String {
        guard let entry = getpwuid(uid_t(uid)), let name = entry.pointee.pw_name else { return "?" }
        return String(cString: name)
    }

    /// The `Status` document among relinkd's `Manager1` properties; nil when
    /// they have none.
    /// - Throws: `Failed` when it is not a document this relinkctl reads.
    static func document(in props: [String: DBusValue]) throws(RelinkClientError) -> StatusDocument? {
        guard let json = props[Manager1Property.status.rawValue]?.stringValue else { return nil }
        do { return try StatusDocument(json: json) } catch {
            throw RelinkClientError(.failed, "relinkd's Status could not be read (\(error)); are relinkd and relinkctl of the same version?")
        }
    }

    /// `identifier`'s entry in relinkd's `Status` (its connections, its
    /// launch spec), nil when the caller does not see it.
    static func entry(of identifier: String, in props: [String: DBusValue]) throws(RelinkClientError) -> StatusDocument.Identifier? {
        try document(in: props)?.identifiers.first { $0.id == identifier }
    }

    /// `AdapterState: poweredOn (roles central, peripheral)`: the one
    /// wording `status` and `register` print the adapter's state in.
    static func adapterStateLine(_ state: String, roles: [String]) -> String {
        "AdapterState: \(state)" + (roles.isEmpty ? "" : " (roles \(roles.joined(separator: ", ")))")
    }
}
