// relink-beacon (Swift): watches iBeacons through relinkd and prints each
// frame it reads from `discovered` events. relinkd keeps the scan (and its
// filter: Apple's manufacturer data starting 02 15) across restarts of this
// program and of relinkd; a beacon is reported again whenever its frame
// changes.
//
//   relink-beacon [--bus-address ADDRESS] [--identifier ID]
//   relink-beacon --help
//
// Each line: `#SEQUENCE ADDRESS ibeacon UUID major MAJOR minor MINOR power POWER dBm rssi RSSI`.
// Exit status: 0 when relinkd's events end (it is gone for good) and after
// --help, 1 on an error from relinkd, 2 on a usage error.
import Foundation
import RelinkClient

/// A command line that does not parse.
struct UsageError: Error {
    var text: String
}

let usage = """
    usage: relink-beacon [--bus-address ADDRESS] [--identifier ID]
    Watches iBeacons through relinkd and prints each frame.
      --bus-address ADDRESS  relinkd's bus (default: the system bus, or DBUS_SYSTEM_BUS_ADDRESS)
      --identifier ID        the restore identifier (default: example-beacons-swift)
      --help                 this text

    """

/// The command line: `[--bus-address ADDRESS] [--identifier ID]`; nil for `--help`.
func parse(_ arguments: [String]) throws(UsageError) -> (bus: String?, identifier: String)? {
    var bus: String?, identifier = "example-beacons-swift"
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        if argument == "--help" || argument == "-h" { return nil }
        guard let value = rest.popFirst() else { throw UsageError(text: "\(argument) needs a value") }
        switch argument {
        case "--bus-address": bus = value
        case "--identifier": identifier = value
        default: throw UsageError(text: "unknown argument \(argument)")
        }
    }
    return (bus, identifier)
}

/// Prints a line and flushes it at once, also into a file or a pipe (where
/// stdio would keep whole blocks until the program ends).
func print(_ line: String) {
    Swift.print(line)
    fflush(nil)
}

func run(identifier: String, bus: RelinkBus) async throws(RelinkClientError) {
    // readme:begin
    let central = RelinkCentral(restoreIdentifier: identifier, bus: bus)
    let restored = try await central.connect()
    if !restored.scanning {
        try await central.scan(services: [], options: .iBeacons())   // only Apple's 02 15 frames
    }
    for await event in central.events {
        if let beacon = event.iBeacon, let ad = event.advertisement {
            print("#\(event.sequence) \(ad.address) ibeacon \(beacon.proximityUUID) major \(beacon.major) minor \(beacon.minor)"
                  + " power \(beacon.measuredPower) dBm rssi \(ad.rssi.map(String.init) ?? "?")")
        }
        try await central.acknowledge(through: event.sequence)
    }
    // readme:end
}

do {
    guard let (busAddress, identifier) = try parse(Array(CommandLine.arguments.dropFirst())) else {
        Swift.print(usage, terminator: "")
        exit(0)
    }
    try await run(identifier: identifier, bus: RelinkBus(address: busAddress))
} catch let error as UsageError {
    FileHandle.standardError.write(Data("relink-beacon: \(error.text)\n\(usage)".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("relink-beacon: \(error)\n".utf8))
    exit(1)
}
