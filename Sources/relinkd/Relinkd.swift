import ArgumentParser
import RelinkDaemon
import Restoration

@main
struct Relinkd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relinkd",
        abstract: "Keeps Bluetooth LE links alive across restarts of clients, relinkd, bluetoothd, adapters and the machine.",
        version: RelinkVersion.string)

    @Option(name: .long, help: "Directory for the restore store (default: $STATE_DIRECTORY, else ./State).")
    var stateDirectory: String?

    func run() async throws {
        throw ValidationError("relinkd's daemon is not implemented yet (see the README's status section)")
    }
}
