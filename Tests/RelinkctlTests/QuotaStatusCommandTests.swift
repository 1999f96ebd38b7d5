import BenchSupport
import Foundation
import Testing

/// `relinkctl status` as root shows the per-user bounds and each user's use
/// against them (issue 39, docs/relinkd-conf.md), human and --json; an
/// ordinary user, running relinkctl as themself, sees no one's. relinkd
/// runs with a relinkd.conf of small bounds, so one register fills one.
@Suite(.serialized) struct QuotaStatusCommandTests {
    static let canRun = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    static let nobody: (uid: UInt32, gid: UInt32) = (65534, 65534)

    @Test(.enabled(if: canRun, "needs root and setpriv to run relinkctl as nobody"))
    func rootSeesEachUsersUseAgainstTheBoundsAndAUserSeesNone() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-\(UUID().uuidString).conf").path
        try "max-identifiers = 1\nmax-stored-events = 5000\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        try await CtlHarness.with(relinkdArguments: ["--config", config]) { h in
            try Self.letEveryoneReach(h.bus)
            try await h.ok("register", "root-door", "--event-limit", "3000")
            let first = try await CtlProcess.run(["--bus-address", h.bus, "register", "porch"], user: Self.nobody)
            #expect(first.status == 0, "\(first)")
            // nobody's one identifier fills their bound: the next is refused.
            let second = try await CtlProcess.run(["--bus-address", h.bus, "register", "garage"], user: Self.nobody)
            #expect(second.status == 1 && second.stderr.contains("org.relink.Error.QuotaExceeded"), "\(second)")

            let plain = try await h.ok("status").stdout
            let lines = plain.split(separator: "\n").map(String.init)
            #expect(lines.contains("Quotas (per user but root, /etc/relink/relinkd.conf): identifiers 1, intents 256, subscriptions 1024, "
                                   + "published-services 64, transfer-bytes 67108864, stored-events 5000"), "\(plain)")
            #expect(lines.contains("  root (uid 0, not bounded by relinkd.conf): identifiers 1, intents 0, subscriptions 0, published-services 0, "
                                   + "transfer-bytes 0, stored-events 3000"), "\(plain)")
            #expect(lines.contains("  nobody (uid 65534): identifiers 1/1 (full), intents 0/256, subscriptions 0/1024, "
                                   + "published-services 0/64, transfer-bytes 0/67108864, stored-events 1000/5000"), "\(plain)")

            let json = try await h.ok("--json", "status").jsonObject()
            let quotas = try #require(json["quotas"] as? [String: Any], "\(json)")
            #expect((quotas["bounds"] as? [String: Any])?["identifiers"] as? Int == 1)
            let users = quotas["users"] as? [[String: Any]] ?? []
            let user = try #require(users.first { $0["uid"] as? Int == 65534 }, "\(quotas)")
            #expect(user["bounded"] as? Bool == true)
            #expect((user["use"] as? [String: Any])?["identifiers"] as? Int == 1)
            #expect((user["use"] as? [String: Any])?["storedEvents"] as? Int == 1000)

            // nobody's own status: their identifier, nobody's quotas.
            let theirs = try await CtlProcess.run(["--bus-address", h.bus, "status"], user: Self.nobody)
            #expect(theirs.status == 0 && theirs.stdout.contains("  porch: 0 connection(s)"), "\(theirs)")
            #expect(!theirs.stdout.contains("Quotas") && !theirs.stdout.contains("root-door"), "\(theirs)")
            let theirsJSON = try await CtlProcess.run(["--bus-address", h.bus, "--json", "status"], user: Self.nobody)
            #expect(theirsJSON.status == 0, "\(theirsJSON)")
            let theirsDocument = try theirsJSON.jsonObject()
            #expect(theirsDocument["quotas"] == nil && (theirsDocument["identifiers"] as? [[String: Any]])?.count == 1, "\(theirsJSON)")
        }
    }

    /// The bench's bus socket, and every directory above it, reachable by
    /// any user (the bench's bus allows every user; its directory is root's).
    static func letEveryoneReach(_ address: String) throws {
        let path = try #require(address.split(separator: ",").first.flatMap { $0.hasPrefix("unix:path=") ? String($0.dropFirst(10)) : nil },
                                "not a unix:path address: \(address)")
        #expect(chmod(path, 0o777) == 0)
        var directory = (path as NSString).deletingLastPathComponent
        while directory != "/" && directory != "/tmp" && !directory.isEmpty {
            var info = stat()
            guard stat(directory, &info) == 0 else { break }
            _ = chmod(directory, (info.st_mode & 0o7777) | 0o011)
            directory = (directory as NSString).deletingLastPathComponent
        }
    }
}
