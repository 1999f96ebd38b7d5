import DBus
import Foundation
import RelinkModel
import Testing

/// A short fuzz run against the real relinkd (the long one, 10,000 calls,
/// is the end-to-end suite's): random methods with random arguments of
/// random types, many at once. Every call gets a reply, relinkd stays up,
/// and no identifier appears or disappears.
@Suite(.serialized, .timeLimit(.minutes(3))) struct APIFuzzSmokeTests {
    static let methods = ["Scan", "StopScan", "Connect", "Cancel", "Subscribe", "Unsubscribe", "Read", "Write", "Events", "Ack", "Watch",
                          "Unwatch", "Register", "Unregister", "ListIdentifiers", "Get", "GetAll", "GetManagedObjects", "Introspect"]

    static func value(_ r: inout SplitMix64, depth: Int = 0) -> DBusValue {
        switch r.next() % (depth > 1 ? 7 : 10) {
        case 0: return .string(["", "x", "00:00:00:00:00:02", "AA:BB:CC:DD:EE:FF", Harness.lockService, "org.example.lock", "bad id ✓",
                                String(repeating: "z", count: 3000), "1B4E28BA-2FA1-11D2-883F-0016D3CCA427"][Int(r.next() % 9)])
        case 1: return .uint64(r.next() % 3 == 0 ? .max : r.next() % 50)
        case 2: return .uint32(UInt32(truncatingIfNeeded: r.next() % 20_000))
        case 3: return .boolean(r.next() % 2 == 0)
        case 4: return .double([-1, 0, 5, .nan, .infinity, 1e9][Int(r.next() % 6)])
        case 5: return .int32(Int32(truncatingIfNeeded: r.next()))
        case 6: return .byte(UInt8(truncatingIfNeeded: r.next()))
        case 7: return .array(.string, (0..<Int(r.next() % 70)).map { _ in .string(["180d", "zz", Harness.lockState][Int(r.next() % 3)]) })
        case 8:
            let keys = ["timeout", "services", "strategies", "address_type", "pending_until_cancelled", "allow_duplicates", "replay",
                        "name_rule", "with_response", "bogus"]
            return .dictionary(key: .string, value: .variant, (0..<Int(r.next() % 20)).map { _ in
                .init(.string(keys[Int(r.next() % UInt64(keys.count))]), .variant(value(&r, depth: depth + 1)))
            })
        default: return .array(.byte, (0..<Int(r.next() % 600)).map { _ in .byte(1) })
        }
    }

    @Test func randomCallsAllGetRepliesAndRelinkdStaysUp() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            let before = try await h.control.status()
            var r = SplitMix64(seed: 7)
            var replies = 0, calls = 0
            for _ in 0..<20 {
                var batch: [(ObjectPath, String, String, [DBusValue])] = []
                for _ in 0..<100 {
                    let method = Self.methods[Int(r.next() % UInt64(Self.methods.count))]
                    let args = (0..<Int(r.next() % 6)).map { _ in Self.value(&r) }
                    let (path, iface): (ObjectPath, String) = switch method {
                    case "Register", "Unregister", "ListIdentifiers": (APIClient.manager, "org.relink.Manager1")
                    case "Get", "GetAll": (r.next() % 2 == 0 ? central : APIClient.manager, "org.freedesktop.DBus.Properties")
                    case "GetManagedObjects": (APIClient.manager, "org.freedesktop.DBus.ObjectManager")
                    case "Introspect": (central, "org.freedesktop.DBus.Introspectable")
                    default: (central, "org.relink.Central1")
                    }
                    // Keep the state: never a well-formed Register/Unregister of the lock's identifier.
                    if method == "Unregister" || method == "Register" || method == "Unwatch" || method == "Watch" { continue }
                    batch.append((path, iface, method, args))
                }
                calls += batch.count
                replies += await withTaskGroup(of: Int.self) { group in
                    for (path, iface, method, args) in batch {
                        group.addTask {
                            do { _ = try await client.call(path, iface, method, args); return 1 } catch let e as DBusError {
                                return e.name == .noReply || e.name == .disconnected ? 0 : 1
                            } catch { return 0 }
                        }
                    }
                    return await group.reduce(0, +)
                }
                #expect(h.relinkd?.process.isRunning == true)
            }
            #expect(replies == calls, "\(calls - replies) calls got no reply")
            #expect(h.relinkd?.process.isRunning == true)
            let after = try await h.control.status()
            #expect((after["identifiers"] as? [[String: Any]])?.map { $0["id"] as? String } == (before["identifiers"] as? [[String: Any]])?.map { $0["id"] as? String })
        }
    }
}
