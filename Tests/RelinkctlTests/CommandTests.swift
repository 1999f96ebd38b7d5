import BenchSupport
import Foundation
import Testing

/// relinkctl against relinkd on the bench: every command's output, its
/// --json document and its exit code.
@Suite(.serialized) struct CommandTests {
    static let id = "front-door"

    @Test func identifierLifecycleAndErrors() async throws {
        try await CtlHarness.with { h in
            // register: created, then restored; the JSON carries the restored state.
            let created = try await h.ok("register", Self.id)
            #expect(created.stdout.hasPrefix("Created front-door at /org/relink/central/front_2ddoor"), "\(created)")
            // The adapter's state in the same words as `status` (below).
            #expect(created.stdout.contains("\nAdapterState: poweredOn (roles central, peripheral, central-peripheral)\n"), "\(created)")
            let again = try await h.ok("--json", "register", Self.id)
            let restored = try again.jsonObject()
            #expect(restored["new"] as? Bool == false)
            #expect(restored["object"] as? String == "/org/relink/central/front_2ddoor")
            #expect((restored["peripherals"] as? [Any])?.isEmpty == true)
            #expect(restored["lastSequence"] as? Int == 0)
            #expect(restored["adapterState"] as? String == "poweredOn")
            #expect(restored["adapterRoles"] as? [String] == ["central", "peripheral", "central-peripheral"])

            // list and show, plain and --json.
            let list = try await h.ok("list")
            #expect(list.stdout == "front-door\t/org/relink/central/front_2ddoor\n", "\(list)")
            let listJSON = try await h.ok("list", "--json")
            #expect((try listJSON.json() as? [[String: Any]])?.map { $0["identifier"] as? String } == ["front-door"])
            let show = try await h.ok("--json", "show", Self.id)
            let central = try show.jsonObject()
            #expect(central["identifier"] as? String == Self.id)
            #expect(central["scanning"] as? Bool == false)
            #expect((try await h.ok("show", Self.id)).stdout.contains("Identifier: front-door"))
            // --event-limit changes the bound; relinkd refuses one out of range.
            #expect(central["eventLimit"] as? Int == 1000)
            try await h.ok("register", Self.id, "--event-limit", "5000")
            #expect(try await h.ok("--json", "show", Self.id).jsonObject()["eventLimit"] as? Int == 5000)
            let tooMany = try await h.ctl("register", Self.id, "--event-limit", "100001")
            #expect(tooMany.status == 1 && tooMany.stderr.contains("event_limit"), "\(tooMany)")

            // scan and stop-scan show in the Central1 properties.
            try await h.ok("scan", Self.id, "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b")
            let scanning = try await h.ok("--json", "show", Self.id).jsonObject()
            #expect(scanning["scanning"] as? Bool == true)
            #expect(scanning["scanServices"] as? [String] == ["8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"])
            try await h.ok("stop-scan", Self.id)
            #expect(try await h.ok("--json", "show", Self.id).jsonObject()["scanning"] as? Bool == false)

            // status names relinkd's version and the identifier.
            let status = try await h.ok("--json", "status").jsonObject()
            // One document, one casing: Manager1's properties and Status's entries side by side.
            #expect(status["version"] is String && status["Status"] == nil && status["status"] == nil, "\(status)")
            #expect(status["adapter"] as? String == "hci0")
            #expect(status["adapterState"] as? String == "poweredOn")
            let ids = status["identifiers"] as? [[String: Any]]
            #expect(ids?.map { $0["id"] as? String } == [Self.id])
            let plainStatus = try await h.ok("status")
            #expect(plainStatus.stdout.contains("Ready: true") && plainStatus.stdout.contains("  front-door: 0 connection(s), 0 subscription(s), scanning false"), "\(plainStatus)")
            #expect(plainStatus.stdout.contains("AdapterState: poweredOn (roles central, peripheral, central-peripheral)\n"), "\(plainStatus)")
            // relinkd's inbox: what waits now and the most that ever did (issue 33 item 4).
            #expect(plainStatus.stdout.range(of: #"\nInbox: \d+ queued, at most [1-9]\d* since relinkd started\n"#, options: .regularExpression) != nil, "\(plainStatus)")
            let inbox = try #require(status["inbox"] as? [String: Any])
            #expect((inbox["highWater"] as? Int ?? 0) >= 1 && inbox["queued"] is Int, "\(inbox)")

            // Unknown identifier or peripheral: exit 4, the error name on stderr.
            for arguments in [["show", "back-door"], ["events", "back-door"], ["stop-scan", "back-door"], ["forget", "back-door"],
                              ["connect", Self.id, "6b1f2c3d-0000-4abc-8def-0123456789ab"]] {
                let result = try await h.ctl(arguments)
                #expect(result.status == 4, "\(arguments): \(result)")
                #expect(result.stderr.hasPrefix("relinkctl: org.relink.Error.Unknown"), "\(arguments): \(result)")
                #expect(result.stdout.isEmpty)
            }
            // A bad UUID is InvalidArguments (exit 1), relinkd running or not.
            let bad = try await h.ctl("scan", Self.id, "xyz")
            #expect(bad.status == 1 && bad.stderr.hasPrefix("relinkctl: org.relink.Error.InvalidArguments: "), "\(bad)")

            // forget: gone from list, show exits 4.
            let forget = try await h.ok("--json", "forget", Self.id)
            #expect(try forget.jsonObject()["forgotten"] as? Bool == true)
            #expect(try await h.ok("list").stdout.isEmpty)
            let gone = try await h.ctl("show", Self.id)
            #expect(gone.status == 4)
            #expect(gone.stderr == "relinkctl: org.relink.Error.UnknownIdentifier: No restore identifier \"front-door\" is registered (or it belongs to another user). Register it with `relinkctl register front-door`.\n", "\(gone)")
        }
    }

    /// An identifier relinkd does not know gets one line, word for word the
    /// same from every command (whether Manager1 or the Central1 object
    /// answered), and exit 4.
    @Test func unknownIdentifierIsWordedTheSameByEveryCommand() async throws {
        try await CtlHarness.with { h in
            let id = "back-door", address = CtlHarness.lockAddress
            let commands: [[String]] = [
                ["show", id], ["scan", id], ["stop-scan", id], ["events", id], ["--json", "events", id], ["events", id, "--ack"],
                ["forget", id], ["connect", id, address], ["cancel", id, address],
                ["subscribe", id, address, CtlHarness.lockService, CtlHarness.lockState],
                ["unsubscribe", id, address, CtlHarness.lockService, CtlHarness.lockState],
                ["read", id, address, CtlHarness.lockService, CtlHarness.lockState],
                ["write", id, address, CtlHarness.lockService, CtlHarness.lockCommand, "00"],
            ]
            let line = "relinkctl: org.relink.Error.UnknownIdentifier: No restore identifier \"back-door\" is registered (or it belongs to another user). Register it with `relinkctl register back-door`.\n"
            for arguments in commands {
                let result = try await h.ctl(arguments)
                #expect(result.status == 4, "\(arguments): \(result)")
                #expect(result.stderr == line, "\(arguments): \(result)")
                #expect(result.stdout.isEmpty, "\(arguments): \(result)")
            }
        }
    }

    /// `status` says why a connection is not up: its attempt and last error.
    @Test func statusShowsTheLastErrorOfAConnectionThatIsDown() async throws {
        try await CtlHarness.with { h in
            try await h.ok("register", Self.id)
            try await h.ok("connect", Self.id, "00:00:00:00:00:99", "--strategy", "known-identifier")
            var line = ""
            try await eventually(timeout: .seconds(10), "status to show the connection's last error") {
                let status = (try? await h.ctl("status"))?.stdout ?? ""
                line = status.split(separator: "\n").first { $0.contains("00:00:00:00:00:99") }.map(String.init) ?? ""
                return line.contains(", last error: ")
            }
            #expect(line.contains(" attempt ") && line.contains(", last error: "), "\(line)")
            let json = try await h.ok("--json", "status").jsonObject()
            let ids = json["identifiers"] as? [[String: Any]] ?? []
            let connection = try #require(ids.first.flatMap { ($0["connections"] as? [[String: Any]])?.first })
            #expect(connection["lastError"] is String && connection["lastErrorAtMs"] != nil, "\(connection)")
        }
    }

    /// A store relinkd had to move aside at start-up (it then started
    /// EMPTY) is the first thing `status` says, until relinkd restarts.
    @Test func statusShowsAStoreMovedAsideAtStartUp() async throws {
        try await CtlHarness.with(startRelinkd: false) { h in
            let state = h.directory + "/state"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: state + "/relink.sqlite"))
            try await h.startRelinkd()
            let plain = try await h.ok("status").stdout
            let line = plain.split(separator: "\n").first { $0.hasPrefix("Quarantined: ") }.map(String.init) ?? ""
            #expect(line.contains(state + "/relink.sqlite") && line.contains(state + "/quarantine/relink-")
                    && line.contains("corrupt") && line.contains("EMPTY"), "\(plain)")
            let json = try await h.ok("--json", "status").jsonObject()
            let entries = json["quarantined"] as? [[String: Any]] ?? []
            #expect(entries.count == 1 && entries.first?["path"] as? String == state + "/relink.sqlite", "\(json)")
        }
    }

    @Test func peripheralsShowTheLinksSizesAndAStreamOfWritesWithoutResponseComesFromStdin() async throws {
        try await CtlHarness.with { h in
            try await h.registerAndConnectLock(Self.id)
            // The link's MTU and largest sizes, plain and --json.
            let listed = try await h.ok("--json", "peripherals")
            let lock = try #require((try listed.json() as? [[String: Any]])?.first { $0["address"] as? String == CtlHarness.lockAddress })
            let mtu = try #require(lock["mtu"] as? Int)
            #expect(mtu >= 23 && lock["maximumWriteWithResponse"] as? Int == 512
                    && lock["maximumWriteWithoutResponse"] as? Int == mtu - 3, "\(lock)")
            let plain = try await h.ok("peripherals")
            #expect(plain.stdout.contains("mtu \(mtu), largest write 512 with response, \(mtu - 3) without"), "\(plain)")

            // 60 commands streamed from stdin as text (more than relinkd's
            // queue holds, so some are refused and written again): the
            // lock receives every one, and the last one holds.
            let writesBefore = try await h.bench.get("lock")["writes"]?.intValue ?? 0
            let lines = (0..<60).map { $0 % 2 == 0 ? "lock" : "unlock" }
            let streamed = try await CtlProcess.run(["--bus-address", h.bus, "--json", "write", Self.id, CtlHarness.lockAddress,
                                                     CtlHarness.lockService, CtlHarness.lockCommand, "--without-response", "--stream", "--text"],
                                                    stdin: lines.joined(separator: "\n\n") + "\n")
            #expect(streamed.status == 0, "\(streamed)")
            let counts = try streamed.jsonObject()
            #expect(counts["values"] as? Int == 60 && counts["bytes"] as? Int == 300 && counts["maximumLength"] as? Int == mtu - 3, "\(counts)")
            try await eventually(timeout: .seconds(20), "the lock received all 60 streamed commands") {
                (try await h.bench.get("lock")["writes"]?.intValue ?? 0) >= writesBefore + 60
            }
            #expect(try await h.bench.get("lock")["writes"]?.intValue == writesBefore + 60, "none lost, none twice")
            let read = try await h.ok("read", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockState)
            #expect(read.stdout == "756e6c6f636b6564  \"unlocked\"\n", "\(read)")
            print("relinkctl write --stream: \(counts["refused"] ?? "?") of 60 refused and written again")
            // Hex lines; a bad line is named, with relinkd's exit code for a bad argument.
            let hex = try await CtlProcess.run(["--bus-address", h.bus, "write", Self.id, CtlHarness.lockAddress, CtlHarness.lockService,
                                                CtlHarness.lockCommand, "--without-response", "--stream"], stdin: "6c6f636b\nzz\n")
            #expect(hex.status == 1 && hex.stderr.contains("stdin line 2"), "\(hex)")
            // Usage: --stream needs --without-response and no HEX argument.
            let usage = try await h.ctl("write", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockCommand, "--stream")
            #expect(usage.status == 2, "\(usage)")
        }
    }

    /// `events --follow` on an identifier another relinkctl forgets: the
    /// follower says so and exits 4 (unknown identifier), instead of
    /// waiting for events that can no longer come; a second identifier's
    /// removal does not end it.
    @Test func followingAForgottenIdentifierSaysSoAndExits() async throws {
        try await CtlHarness.with { h in
            try await h.registerAndConnectLock(Self.id)
            try await h.ok("register", "other-door")
            let follower = try CtlFollower(["--bus-address", h.bus, "events", Self.id, "--follow"])
            defer { follower.stop() }
            // Following once it printed the stored `connected` (Watch replays it).
            let printed = try await follower.lines { $0.contains { $0.contains(" connected ") } }
            #expect(printed.contains { $0.contains(" connected ") }, "\(printed) \(follower.stderr)")
            try await h.ok("forget", "other-door")
            #expect(try await follower.exitStatus(within: .seconds(2)) == nil, "another identifier's removal ended the follower: \(follower.stderr)")
            try await h.ok("forget", Self.id)
            let status = try await follower.exitStatus(within: .seconds(20))
            #expect(status == 4, "\(String(describing: status)): \(follower.stderr)")
            #expect(follower.stderr == "relinkctl: org.relink.Error.UnknownIdentifier: The restore identifier \"\(Self.id)\" was forgotten (unregistered) while followed.\n", "\(follower.stderr)")
        }
    }

    /// issue 38, item 1: `connect` says what happens next, and a
    /// `subscribe` with no connection intent says that alone it links
    /// nothing, instead of succeeding into silence.
    @Test func connectAndSubscribeSayWhatHappensNext() async throws {
        try await CtlHarness.with { h in
            // The lock known to relinkd (another identifier connected it):
            // a subscription to an unknown peripheral is refused already.
            try await h.registerAndConnectLock("other-door")
            try await h.ok("register", Self.id)
            let alone = try await h.ok("subscribe", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockState)
            #expect(alone.stdout.contains("\(Self.id): no connection intent for \(CtlHarness.lockAddress): values come only while a link to it is up"), "\(alone)")
            let connect = try await h.ok("connect", Self.id, CtlHarness.lockAddress, "--service", CtlHarness.lockService)
            let lines = connect.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2 && lines[0].count == 36, "the peripheral's UUID first: \(connect)")
            #expect(lines.last?.hasPrefix("\(Self.id): looking for \(CtlHarness.lockAddress) until it connects, then for good (pending until cancelled)") == true, "\(connect)")
            let timed = try await h.ok("connect", Self.id, "00:00:00:00:00:99", "--timeout", "5")
            #expect(timed.stdout.contains("until it connects or 5 s pass"), "\(timed)")
            let again = try await h.ok("subscribe", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockState)
            #expect(!again.stdout.contains("no connection intent"), "\(again)")
        }
    }

    @Test func lockConnectSubscribeReadWriteAndEvents() async throws {
        try await CtlHarness.with { h in
            try await h.ok("register", Self.id)
            let connect = try await h.ok("--json", "connect", Self.id, CtlHarness.lockAddress, "--service", CtlHarness.lockService)
            let peripheral = try #require(try connect.jsonObject()["peripheral"] as? String)
            #expect(peripheral.count == 36)
            try await h.waitForEvents(Self.id, kind: "connected")
            try await h.ok("subscribe", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockState)

            // A follower started now prints every new event as a JSON line
            // (Watch replays what is stored after --after, so it misses
            // nothing even if it attaches late).
            let before = try await h.events(Self.id).compactMap { $0["sequence"] as? Int }.max() ?? 0
            let follower = try CtlFollower(["--bus-address", h.bus, "--json", "events", Self.id, "--follow", "--after", "\(before)"])
            defer { follower.stop() }

            // read and write through the live link (hex in and out); the
            // write notifies the new state.
            let read = try await h.ok("read", Self.id, peripheral, CtlHarness.lockService, CtlHarness.lockState)
            #expect(read.stdout == "6c6f636b6564  \"locked\"\n", "\(read)")
            try await h.ok("write", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockCommand, "unlock", "--text")
            let after = try await h.ok("--json", "read", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockState)
            #expect(try after.jsonObject()["value"] as? String == "756e6c6f636b6564")
            // A command the lock refuses is relinkd's error: exit 1.
            let refused = try await h.ctl("write", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockCommand, "00")
            #expect(refused.status == 1 && refused.stderr.hasPrefix("relinkctl: org.relink.Error."), "\(refused)")
            // Pushed values count once the lock's notifications are armed:
            // a probe is pushed until the follower prints it.
            try await h.pushUntilPrinted(0x7f, by: follower)
            for value: UInt8 in [1, 2, 3] { try await h.push(value) }

            // The follower printed the value-notified events in sequence
            // order (waited for until the last value is printed: the write's
            // notification and other events come before it).
            func parse(_ lines: [String]) -> [[String: Any]] {
                lines.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
            }
            func values(_ followed: [[String: Any]]) -> [[Int]] {
                followed.filter { $0["kind"] as? String == "value-notified" }.compactMap {
                    (($0["payload"] as? [String: Any])?["valueNotified"] as? [String: Any])?["value"] as? [Int]
                }
            }
            let lines = try await follower.lines { values(parse($0)).last == [3] }
            let followed = parse(lines)
            let sequences = followed.compactMap { $0["sequence"] as? Int }
            #expect(sequences.count == followed.count && sequences == sequences.sorted() && Set(sequences).count == sequences.count)
            #expect(sequences.first.map { $0 > before } == true)
            #expect(values(followed).suffix(3) == [[1], [2], [3]], "\(lines)")

            // events prints them too; --ack deletes them.
            // One line per event for people: the peripheral, the
            // characteristic, the value in hex and, when printable, as text.
            let plain = try await h.ok("events", Self.id)
            let printed = plain.stdout.split(separator: "\n").map(String.init)
            let key = "\(CtlHarness.lockService)/\(CtlHarness.lockState)".lowercased()
            #expect(printed.contains { $0.hasSuffix(" value-notified \(peripheral) \(key) 756e6c6f636b6564  \"unlocked\"") }, "\(printed)")
            #expect(printed.contains { $0.hasSuffix(" value-notified \(peripheral) \(key) 01") }, "\(printed)")
            let stamped = #"^\d+ \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} "#  // SEQ TIME
            #expect(printed.contains { $0.range(of: stamped + #"connected [0-9A-F-]{36} 00:00:00:00:00:02 via \w+"#, options: .regularExpression) != nil }, "\(printed)")
            #expect(printed.allSatisfy { $0.range(of: stamped, options: .regularExpression) != nil }, "every event has its time: \(printed)")
            let stored = try await h.events(Self.id)
            let last = try #require(stored.last?["sequence"] as? Int)
            try await h.ok("events", Self.id, "--ack")
            #expect(try await h.events(Self.id).allSatisfy { ($0["sequence"] as? Int ?? 0) > last })
            #expect(try await h.ok("--json", "show", Self.id).jsonObject()["acknowledged"] as? Int == last)

            // peripherals: the lock, connected, with its names.
            let list = try await h.ok("--json", "peripherals")
            let lock = try #require((try list.json() as? [[String: Any]])?.first { $0["address"] as? String == CtlHarness.lockAddress })
            #expect((lock["id"] as? String)?.uppercased() == peripheral)
            #expect(lock["connected"] as? Bool == true)
            #expect(lock["gapName"] as? String == "Front Door")
            #expect(try await h.ok("peripherals").stdout.contains(peripheral))

            // register now restores the lock with its subscription.
            let restored = try await h.ok("--json", "register", Self.id).jsonObject()
            let entry = try #require((restored["peripherals"] as? [[String: Any]])?.first)
            #expect((entry["id"] as? String)?.uppercased() == peripheral)
            #expect(entry["state"] as? String == "connected")
            #expect((entry["subscriptions"] as? [[String: Any]])?.first?["characteristic"] as? String == CtlHarness.lockState)

            // unsubscribe and cancel; a second cancel knows nothing of it.
            try await h.ok("unsubscribe", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockState)
            try await h.ok("cancel", Self.id, CtlHarness.lockAddress)
            let again = try await h.ctl("cancel", Self.id, CtlHarness.lockAddress)
            #expect(again.status != 0 && again.stderr.hasPrefix("relinkctl: org.relink.Error."), "\(again)")
        }
    }

    @Test func followWithAckAcknowledgesWhatItPrinted() async throws {
        try await CtlHarness.with { h in
            try await h.ok("register", Self.id)
            try await h.ok("connect", Self.id, CtlHarness.lockAddress, "--service", CtlHarness.lockService)
            try await h.ok("subscribe", Self.id, CtlHarness.lockAddress, CtlHarness.lockService, CtlHarness.lockState)
            try await h.waitForEvents(Self.id, kind: "connected")
            let follower = try CtlFollower(["--bus-address", h.bus, "events", Self.id, "--follow", "--ack"])
            defer { follower.stop() }
            try await h.pushUntilPrinted(7, by: follower)
            #expect(follower.output.lines.contains { $0.contains(" value-notified ") && $0.hasSuffix(" 07") })
            // Lines for people: "SEQ KIND ..."; everything printed was acknowledged (and deleted).
            let printed = follower.output.lines.compactMap { UInt64($0.split(separator: " ").first ?? "") }
            #expect(printed == printed.sorted() && printed.first == 1, "\(follower.output.lines)")
            let last = try #require(printed.last)
            try await eventually(timeout: .seconds(5), "Acknowledged to reach \(last)") {
                let show = try? await h.ctl("--json", "show", Self.id).jsonObject()
                return (show?["acknowledged"] as? Int).map { UInt64($0) >= last } == true
            }
            #expect(try await h.events(Self.id).allSatisfy { UInt64($0["sequence"] as? Int ?? 0) > last })
        }
    }

    /// relinkd killed while a follower watches: exit 3, and the message
    /// says relinkd left (not that it is not running).
    @Test func followEndsWithExitThreeWhenRelinkdDies() async throws {
        try await CtlHarness.with { h in
            try await h.registerAndConnectLock(Self.id)
            // The stored events are replayed after Watch: once one is
            // printed, the follower is attached.
            let follower = try CtlFollower(["--bus-address", h.bus, "events", Self.id, "--follow"])
            defer { follower.stop() }
            try await eventually(timeout: .seconds(20), "the follower to print the stored events") { !follower.output.lines.isEmpty }
            h.killRelinkd()
            try await eventually(timeout: .seconds(10), "relinkctl events --follow to end") { !follower.process.isRunning }
            #expect(follower.process.terminationStatus == 3)
            #expect(follower.stderr == "relinkctl: org.freedesktop.DBus.Error.NameHasNoOwner: relinkd left the bus.\n", "\(follower.stderr)")
        }
    }
}
