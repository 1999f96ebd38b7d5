// relink-band (Swift): keeps a heart-rate band connected through relinkd and
// prints its values. relinkd holds the link and the subscription across
// restarts of this program and of relinkd; this program gets the restored
// state first, then every value it has not acknowledged, in order, once,
// then live ones.
//
//   relink-band [--bus-address ADDRESS] [--identifier ID] BAND-ADDRESS
//   relink-band --help
//
// Exit status: 0 when relinkd's events end (it is gone for good) and after
// --help, 1 on an error from relinkd, 2 on a usage error.
import Foundation
import RelinkClient

let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"             // Heart Rate service
let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"  // Heart Rate Measurement (notify)

let usage = """
    usage: relink-band [--bus-address ADDRESS] [--identifier ID] BAND-ADDRESS
    Keeps a heart-rate band connected through relinkd and prints its values.
      --bus-address ADDRESS  relinkd's bus (default: the system bus, or DBUS_SYSTEM_BUS_ADDRESS)
      --identifier ID        the restore identifier (default: example-band-swift)
      --help                 this text

    """

/// The command line: `[--bus-address ADDRESS] [--identifier ID] BAND-ADDRESS`, or `--help`.
struct Arguments {
    var busAddress: String?
    var identifier = "example-band-swift"
    var band = ""
    var help = false

    init(_ arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--bus-address": busAddress = try Self.value(of: argument, from: &rest)
            case "--identifier": identifier = try Self.value(of: argument, from: &rest)
            case "--help", "-h": help = true; return
            case _ where argument.hasPrefix("-"): throw UsageError(text: "unknown option \(argument)")
            default:
                guard band.isEmpty else { throw UsageError(text: "one band address only") }
                band = argument
            }
        }
        guard !band.isEmpty else { throw UsageError(text: "the band's address is missing") }
    }

    static func value(of option: String, from rest: inout ArraySlice<String>) throws(UsageError) -> String {
        guard let value = rest.popFirst() else { throw UsageError(text: "\(option) needs a value") }
        return value
    }
}

/// A command line that does not parse.
struct UsageError: Error {
    var text: String
}

/// The heart rate of a Heart Rate Measurement: a flags byte, then the rate
/// as a UInt8, or as a little-endian UInt16 when flag bit 0 is set.
func beatsPerMinute(_ value: [UInt8]) -> Int? {
    guard let flags = value.first else { return nil }
    if flags & 0x01 == 0 { return value.count >= 2 ? Int(value[1]) : nil }
    return value.count >= 3 ? Int(value[1]) | Int(value[2]) << 8 : nil
}

/// Prints a line and flushes it at once, also into a file or a pipe (where
/// stdio would keep whole blocks until the program ends).
func print(_ line: String) {
    Swift.print(line)
    fflush(nil)
}

func run(band: String, identifier: String, bus: RelinkBus) async throws(RelinkClientError) {
    // readme:begin
    let central = RelinkCentral(restoreIdentifier: identifier, bus: bus)
    let restored = try await central.connect()   // Register: the restored state, before any event
    print("restored: \(restored.peripherals.map { "\($0.address) \($0.state)" }), acknowledged #\(restored.acknowledged)")
    if !restored.peripherals.contains(where: { $0.address == band.uppercased() }) {
        try await central.connect(peripheral: band, options: .init(services: [heartRate]))
        try await central.subscribe(peripheral: band, service: heartRate, characteristic: heartRateMeasurement)
    }
    for await event in central.events {          // unacknowledged stored events, then live ones, in order, once
        if let value = event.value, let bpm = beatsPerMinute(value) {
            print("#\(event.sequence) heart rate \(bpm) bpm")
        } else if event.kind == .restored {
            // relinkd restarted and kept the link. A value sent while relinkd was
            // down is not an event: read what must be current (central.read).
            print("#\(event.sequence) restored")
        } else {
            print("#\(event.sequence) \(event.kind)")
        }
        try await central.acknowledge(through: event.sequence)
    }
    // readme:end
}

do {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    if arguments.help {
        Swift.print(usage, terminator: "")
        exit(0)
    }
    try await run(band: arguments.band, identifier: arguments.identifier, bus: RelinkBus(address: arguments.busAddress))
} catch let error as UsageError {
    FileHandle.standardError.write(Data("relink-band: \(error.text)\n\(usage)".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("relink-band: \(error)\n".utf8))
    exit(1)
}
