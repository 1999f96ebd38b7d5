import BenchSupport
import DBus
import Foundation
import Synchronization
import Testing
import RelinkModel

/// Who receives what: Event and PropertiesChanged signals are unicast to
/// attached clients only; Watch/Unwatch; detach when a client leaves;
/// Unregister forgets everything.
@Suite(.serialized, .timeLimit(.minutes(3))) struct APIDeliveryTests {
    /// Every signal from relinkd that reaches a connection with a broad rule.
    final class Eavesdropper: Sendable {
        let connection: Connection
        let seen = Mutex<[Message]>([])
        let task: Mutex<Task<Void, Never>?> = Mutex(nil)

        init(_ bus: String) async throws {
            connection = try await Connection.connect(to: .address(bus))
            let stream = try await connection.signals(matching: SignalMatch())
            let t = Task { [weak self] in
                do { for try await m in stream { self?.seen.withLock { $0.append(m) } } } catch {}
            }
            task.withLock { $0 = t }
        }

        /// Signals from `sender` about identifiers or peripherals.
        func aboutObjects(from sender: String) -> [String] {
            func ours(_ path: String) -> Bool { path.hasPrefix("/org/relink/central") || path.hasPrefix("/org/relink/peripheral") }
            return seen.withLock { $0 }.filter { m in
                guard m.sender == sender else { return false }
                if ours(m.path?.rawValue ?? "") || m.interface == "org.relink.Central1" { return true }
                if case .objectPath(let p)? = m.body.first { return ours(p.rawValue) }
                return false
            }.map { "\($0.path?.rawValue ?? "") \($0.interface ?? "").\($0.member ?? "")" }
        }

        func close() {
            task.withLock { $0?.cancel() }
            connection.close()
        }
    }

    @Test func signalsAreUnicastToAttachedClientsOnly() async throws {
        try await Harness.with { h in
            let spy = try await Eavesdropper(h.bench.busAddress)
            defer { spy.close() }
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let changes = try await client.connection.signals(matching: SignalMatch(
                sender: "org.relink", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
            let changed = Mutex<[String]>([])
            let changeTask = Task { do { for try await m in changes { changed.withLock { $0.append(m.path?.rawValue ?? "") } } } catch {} }
            defer { changeTask.cancel() }

            let added = try await client.connection.signals(matching: SignalMatch(
                sender: "org.relink", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
            var addedIterator = added.makeAsyncIterator()
            let (central, _, _) = try await client.register(Harness.id)
            let announcement = try #require(try await addedIterator.next())
            #expect(announcement.body.first == .objectPath(central), "the registering client is told of its new object")
            try await client.connectLock(central, subscribe: true)
            try await h.waitForEvents("connected", count: 1)
            try await h.push([1, 2, 3])
            try await eventually(timeout: .seconds(10), "3 values at the client") { APIRegisterTests.values(client.events).count >= 3 }
            try await eventually(timeout: .seconds(10), "PropertiesChanged of the central") { changed.withLock { $0.contains(central.rawValue) } }
            let relinkd = try #require(try await client.connection.nameOwner(of: "org.relink"))
            // What is tested is that nothing arrives: a misrouted copy would
            // reach the spy about when the client got its own, so watch a while.
            try await observeQuietly(for: .milliseconds(500), "no signal about relink's objects at a broad match rule") {
                spy.aboutObjects(from: relinkd).isEmpty
            }
            #expect(spy.aboutObjects(from: relinkd).isEmpty, "a broad match rule received \(spy.aboutObjects(from: relinkd))")
            // The spy still works: it sees broadcasts such as NameOwnerChanged.
            #expect(spy.seen.withLock { $0 }.contains { $0.member == "NameOwnerChanged" })
        }
    }

    /// The `LastSequence` that `Get` returns, nil when the call fails.
    static func storedLastSequence(_ client: APIClient, _ central: ObjectPath) async -> UInt64? {
        guard let reply = try? await client.call(central, "org.freedesktop.DBus.Properties", "Get",
                                                 [.string("org.relink.Central1"), .string("LastSequence")]),
              case .variant(.uint64(let stored))? = reply.body.first else { return nil }
        return stored
    }

    /// While values stream, `PropertiesChanged` of the outbox properties
    /// is coalesced (at most one per 100 ms per identifier, after the
    /// first at once), and the last change is always signalled: the last
    /// `LastSequence` a client was told is the one `Get` returns.
    @Test func outboxSignalsAreCoalescedWhileValuesStream() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            let changes = try await client.connection.signals(matching: SignalMatch(
                sender: "org.relink", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: central))
            let lastSequences = Mutex<[UInt64]>([])
            let changeTask = Task {
                do {
                    for try await m in changes {
                        guard m.body.count == 3, case .dictionary(_, _, let entries) = m.body[1] else { continue }
                        for entry in entries where entry.key == .string("LastSequence") {
                            if case .variant(.uint64(let last)) = entry.value { lastSequences.withLock { $0.append(last) } }
                        }
                    }
                } catch {}
            }
            defer { changeTask.cancel() }
            try await client.connectLock(central, subscribe: true)
            try await h.waitForEvents("connected", count: 1)
            // The connect's own events are signalled before values stream.
            try await eventually(timeout: .seconds(10), "the connect's LastSequence signalled") {
                await Self.storedLastSequence(client, central).map { stored in lastSequences.withLock { $0.last } == stored } ?? false
            }
            let before = lastSequences.withLock { $0.count }

            // Spaced so that each value is its own commit (a burst shares
            // one commit, and so one change of LastSequence). A real-time
            // wait that stays: the throttle under test is a time window, so
            // the stream must have a rate (Tests/README.md).
            let values = (UInt8(40)..<UInt8(70)).map { $0 }
            let start = ContinuousClock.now
            for value in values {
                try await h.bench.send(.pushValue("lock", hex: String(format: "%02x", value)))
                try await Task.sleep(for: .milliseconds(15))
            }
            let streamed = ContinuousClock.now - start
            try await eventually(timeout: .seconds(10), "\(values.count) values at the client") {
                values.allSatisfy(APIRegisterTests.values(client.events).contains)
            }
            // The last window closes with a signal of the stored value.
            try await eventually(timeout: .seconds(10), "the last LastSequence signalled") {
                await Self.storedLastSequence(client, central).map { stored in lastSequences.withLock { $0.last } == stored } ?? false
            }
            let reply = try await client.call(central, "org.freedesktop.DBus.Properties", "Get",
                                              [.string("org.relink.Central1"), .string("LastSequence")])
            guard case .variant(.uint64(let stored))? = reply.body.first else {
                Issue.record("LastSequence: \(reply.body)")
                return
            }
            let during = lastSequences.withLock { Array($0.dropFirst(before)) }
            #expect(during.last == stored, "the last change was not signalled: \(during), Get says \(stored)")
            #expect(during == during.sorted() && !during.isEmpty)
            // One at once, one per 100 ms window while values came, one for
            // the last window (the bound the throttle guarantees).
            let bound = 2 + Int((streamed / .milliseconds(100)).rounded(.up))
            #expect(during.count <= bound, "\(during.count) signals for \(values.count) values in \(streamed): not coalesced")
        }
    }

    /// relinkd's loop does not wait for the disk: with SQLite's write lock
    /// held by another process (as a slow or stalled disk would hold the
    /// commit), every value still reaches the attached client, and all are
    /// stored once the lock is released. (Before session 4 the loop waited
    /// in the first value's commit and the others stayed queued.)
    @Test func valuesReachAClientWhileTheDiskIsHeld() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            try await client.connectLock(central, subscribe: true)
            try await h.waitForEvents("connected", count: 1)

            // Another process takes the database's write lock and keeps it
            // 4.5 s (relinkd's writer waits up to 5 s for it).
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            holder.arguments = ["-c", """
                import sqlite3, sys, time
                c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
                c.execute("BEGIN IMMEDIATE")
                print("held", flush=True)
                time.sleep(4.5)  # a stalled disk: holding for a time is the point
                c.execute("ROLLBACK")
                """, h.directory + "/state/relink.sqlite"]
            let out = Pipe()
            holder.standardOutput = out
            try holder.run()
            defer { if holder.isRunning { holder.terminate() } }
            let line = await Task.detached { String(decoding: out.fileHandleForReading.availableData, as: UTF8.self) }.value
            #expect(line.hasPrefix("held"), "the lock holder said \(line.debugDescription)")

            let values: [UInt8] = [31, 32, 33]
            for value in values {
                try await h.bench.send(.pushValue("lock", hex: String(format: "%02x", value)))
                try await eventually(timeout: .seconds(4), "value \(value) of \(values) at the client") {
                    APIRegisterTests.values(client.events).contains(value)
                }
            }
            #expect(holder.isRunning, "the values arrived only after the lock was released")
            holder.waitUntilExit()
            try await eventually(timeout: .seconds(10), "values \(values) stored") {
                let stored = (try? await h.testValues()) ?? []
                return values.allSatisfy(stored.contains)
            }
            #expect(h.relinkd?.log.contains("cannot store") == false)
        }
    }

    @Test func watchUnwatchAndDetachOnLeaving() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([1])
            let stored = try await h.control.events(Harness.id)
            let watcher = try await APIClient.connect(h.bench.busAddress)
            defer { watcher.close() }
            let central = try ObjectPath("/org/relink/central/org_2eexample_2elock")
            // Watch from the first event: the rest of the outbox, then live.
            try await watcher.central(central, "Watch", [.uint64(stored[0].seq)])
            try await watcher.waitForEvents(stored.count - 1)
            try await h.push([2])
            try await eventually(timeout: .seconds(10), "live value 2") { APIRegisterTests.values(watcher.events).contains(2) }
            #expect(watcher.events.map(\.sequence) == Array(watcher.events.map(\.sequence).sorted()))
            #expect(Set(watcher.events.map(\.sequence)).count == watcher.events.count, "an event came twice")
            #expect(!watcher.events.contains { $0.sequence <= stored[0].seq })
            try await watcher.central(central, "Unwatch")
            let count = watcher.events.count
            try await h.push([3])
            // Nothing must reach the watcher: time is what is tested.
            try await observeQuietly(for: .milliseconds(500), "no event at the watcher after Unwatch") { watcher.events.count == count }
            #expect(watcher.events.count == count, "events after Unwatch")

            // A client that leaves the bus is detached (relinkd keeps storing and stays up).
            let leaving = try await APIClient.connect(h.bench.busAddress)
            _ = try await leaving.register(Harness.id)
            leaving.close()
            try await h.push([4])
            try await eventually(timeout: .seconds(10), "value 4 stored") { (try? await h.testValues())?.contains(4) == true }
            #expect(h.relinkd?.process.isRunning == true)
            #expect(h.relinkd?.log.contains("client detached") == true)
        }
    }

    @Test func unregisterForgetsTheIdentifier() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            try await client.connectLock(central, subscribe: false)
            try await client.central(central, "Scan", [.array(.string, []), APIClient.options()])
            try await h.waitForEvents("connected", count: 1)
            try await client.call(APIClient.manager, "org.relink.Manager1", "Unregister", [.string(Harness.id)])
            let list = try await client.call(APIClient.manager, "org.relink.Manager1", "ListIdentifiers").decode([DBusValue].self)
            #expect(list.isEmpty)
            do {
                try await client.central(central, "StopScan")
                Issue.record("the central survived Unregister")
            } catch let error as DBusError {
                #expect(error.name == .unknownObject)
            }
            let status = try await h.control.status()
            #expect((status["identifiers"] as? [Any])?.isEmpty == true)
            #expect(status["discovering"] as? Bool == false)
            // Gone after a restart too, and the name is free again.
            h.killRelinkd()
            try await h.startRelinkd()
            #expect(try await client.call(APIClient.manager, "org.relink.Manager1", "ListIdentifiers").decode([DBusValue].self).isEmpty)
            let again = try await client.register(Harness.id)
            #expect(again.restored["new"] == .boolean(true))
            #expect(again.restored["last_sequence"] == .uint64(0))
        }
    }

    @Test func readyFollowsBluetoothd() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let stream = try await client.connection.signals(matching: SignalMatch(
                sender: "org.relink", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: APIClient.manager))
            let seen = Mutex<[DBusValue]>([])
            let task = Task {
                do {
                    for try await m in stream {
                        if let (_, changed, _) = try? m.decode(String.self, [String: DBusValue].self, [String].self), let ready = changed["Ready"] {
                            seen.withLock { $0.append(ready) }
                        }
                    }
                } catch {}
            }
            defer { task.cancel() }
            try await h.bench.restartBlueZ()
            try await eventually(timeout: .seconds(20), "Ready false, then true") {
                seen.withLock { $0 }.starts(with: [.boolean(false), .boolean(true)])
            }
            let ready = try await client.call(APIClient.manager, "org.freedesktop.DBus.Properties", "Get", [.string("org.relink.Manager1"), .string("Ready")])
            #expect(ready.body == [.variant(.boolean(true))])
        }
    }
}
