import Foundation
import RelinkModel
import Testing

@testable import DBus

@Suite struct RoundTripTests {
    static let samples: [DBusValue] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535),
        .int32(.min), .uint32(.max), .int64(.min), .uint64(.max), .double(-1.25), .double(.infinity),
        .string(""), .string("héllo wörld 😀"), .objectPath(.root), .objectPath(ObjectPath(trusted: "/org/bluez/hci0")),
        .signature(.empty), .signature(Signature(trusted: "a{sv}", types: [.dictionary(key: .string, value: .variant)])),
        .array(.int32, []), .array(.byte, []), .array(.byte, (0...255).map { .byte(UInt8($0)) }),
        .array(.array(.string), [.array(.string, []), .array(.string, [.string("a"), .string("b")])]),
        .dictionary(key: .string, value: .variant, []),
        .dictionary(key: .string, value: .variant, [.init(.string("b"), .variant(.int32(1))), .init(.string("a"), .variant(.string("x")))]),
        .dictionary(key: .uint64, value: .array(.byte), [.init(.uint64(1), .array(.byte, [.byte(9)]))]),
        .structure([.int32(1), .string("s"), .structure([.boolean(true)])]),
        .array(.structure([.byte, .variant]), [.structure([.byte(1), .variant(.variant(.variant(.double(2))))])]),
        .variant(.array(.variant, [])),
        .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)), []),
    ]

    @Test func everyTypeRoundTripsThroughTheEchoObject() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                for v in Self.samples {
                    let back = try await EchoService.echo(client, v)
                    #expect(back == v, "\(v.type)")
                    #expect(back.type == v.type)
                }
            }
        }
    }

    @Test func severalTopLevelArgumentsRoundTrip() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                let args: [DBusValue] = [
                    ["k": DBusValue.string("v"), "n": .uint16(3)].dbusValue, [UInt8]([1, 2, 3]).dbusValue,
                    .structure([.int32(-5), .string("five")]),
                ]
                let reply = try await client.call(
                    destination: EchoService.name, path: EchoService.path, interface: EchoService.interface, method: "EchoMany", arguments: args)
                #expect(reply.body == args)
                let (dict, bytes, _) = try reply.decode([String: DBusValue].self, [UInt8].self, DBusValue.self)
                #expect(dict["k"] == .string("v"))
                #expect(bytes == [1, 2, 3])
            }
        }
    }

    @Test func unixFileDescriptorsRoundTripAndStayUsable() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                #expect(client.canPassUnixFDs)
                var fds: [Int32] = [0, 0]
                #expect(pipe(&fds) == 0)
                let readEnd = UnixFD(takingOwnershipOf: fds[0])
                let writeEnd = UnixFD(takingOwnershipOf: fds[1])
                let sent = DBusValue.structure([.unixFD(writeEnd), .array(.unixFD, [.unixFD(writeEnd), .unixFD(readEnd)])])
                let back = try await EchoService.echo(client, sent)
                #expect(back == sent)
                guard case .structure(let ms) = back, case .unixFD(let received) = ms[0] else {
                    Issue.record("no fd in reply")
                    return
                }
                #expect(received.rawValue != writeEnd.rawValue)
                let text = Array("ping".utf8)
                #expect(write(received.rawValue, text, text.count) == text.count)
                var buf = [UInt8](repeating: 0, count: 4)
                #expect(read(readEnd.rawValue, &buf, 4) == 4)
                #expect(buf == text)
            }
        }
    }

    @Test func randomNestedValuesRoundTrip() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                var gen = RandomValues(rng: SplitMix64(seed: 0x5EED_D8B5))
                let cases = 3000
                var values: [DBusValue] = []
                for _ in 0..<cases {
                    let t = gen.type(depth: 4)
                    values.append(gen.value(t, depth: 4))
                }
                // 8 calls in flight at a time, to exercise concurrency too.
                try await withThrowingTaskGroup(of: (Int, DBusValue).self) { group in
                    var next = 0
                    var done = 0
                    func add() {
                        let i = next
                        let v = values[i]
                        group.addTask { (i, try await EchoService.echo(client, v)) }
                        next += 1
                    }
                    while next < min(8, cases) { add() }
                    while let (i, back) = try await group.next() {
                        done += 1
                        if back != values[i] {
                            Issue.record("case \(i) of type \(values[i].type) did not round-trip")
                        }
                        if next < cases { add() }
                    }
                    #expect(done == cases)
                }
            }
        }
    }
}
