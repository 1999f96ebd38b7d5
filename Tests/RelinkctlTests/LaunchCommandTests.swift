import Foundation
import Testing

/// `relinkctl launch` and `show` (docs/relaunch.md): the spec is set, shown
/// with its state, refused when the bus cannot start the name, checked
/// locally for an unknown event kind, and removed.
@Suite(.serialized) struct LaunchCommandTests {
    static let id = "front-door"

    @Test(.timeLimit(.minutes(2))) func setShowRefuseAndRemoveALaunchSpec() async throws {
        try await CtlHarness.with { h in
            try await h.ok("register", Self.id)
            let name = "org.relink.example.CtlLock"
            try "[D-BUS Service]\nName=\(name)\nExec=/bin/true\n".write(toFile: h.bench.directory + "/services/\(name).service",
                                                                       atomically: true, encoding: .utf8)
            let unknown = try await h.ctl("launch", Self.id, "--bus-name", "org.relink.example.Nowhere")
            #expect(unknown.status == 1 && unknown.stderr.contains("org.relink.Error.NotActivatable"), "\(unknown)")
            let badKind = try await h.ctl("launch", Self.id, "--bus-name", name, "--wake-on", "value-changed")
            #expect(badKind.status == 1 && badKind.stderr.contains("InvalidArguments") && badKind.stderr.contains("value-changed"), "\(badKind)")
            let badUnit = try await h.ctl("launch", Self.id, "--bus-name", name, "--systemd-unit", "../lock")
            #expect(badUnit.status == 1 && badUnit.stderr.contains("not a service unit name"), "\(badUnit)")
            // The bench's bus has no systemd manager: the unit cannot be checked.
            let noManager = try await h.ctl("launch", Self.id, "--bus-name", name, "--systemd-unit", "relink-lock.service")
            #expect(noManager.status == 1 && noManager.stderr.contains("org.relink.Error.NotActivatable"), "\(noManager)")
            let set = try await h.ok("launch", Self.id, "--bus-name", name, "--wake-on", "value-notified", "--wake-on", "connected")
            #expect(set.stdout == "front-door: started by \(name) on connected, value-notified\n", "\(set)")
            let show = try await h.ok("show", Self.id)
            #expect(show.stdout.contains("Launch: \(name) on connected, value-notified; idle, 0 starts in the window"), "\(show)")
            let json = try await h.ok("--json", "show", Self.id).jsonObject()
            let launch = json["launch"] as? [String: Any]
            #expect(launch?["busName"] as? String == name && launch?["wakeOn"] as? [String] == ["connected", "value-notified"])
            // Durable: after relinkd is killed and started again.
            h.killRelinkd()
            try await h.startRelinkd()
            #expect(try await h.ok("show", Self.id).stdout.contains("Launch: \(name)"))
            try await h.ok("launch", Self.id, "--remove")
            #expect(!(try await h.ok("show", Self.id).stdout.contains("Launch:")))
        }
    }
}
