import ArgumentParser
import Foundation
import Logging
import RelinkStore

/// Opens the store once and reports the outcome: `ok <path>` and exit 0, or
/// the error on stdout and `StoreOpenError.exitStatus` as the exit status.
/// Tests run it under another user to check permission failures as root.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "open", abstract: "Open the store once and report the outcome.")

    @Option(help: "State directory.") var directory: String
    @Option(help: "Bad-state policy: refuse or quarantineAndStartEmpty.") var policy: String = "refuse"

    func run() async throws {
        guard let policy = StoreOpenPolicy(rawValue: policy) else { throw ValidationError("unknown policy \(policy)") }
        let store: RelinkStore
        do {
            store = try RelinkStore(directory: directory, policy: policy, logger: Logger(label: "relink.store.open"))
        } catch {
            emit("error \(error)")
            throw ExitCode(error.exitStatus)
        }
        emit("ok \(store.databasePath) quarantined=\(store.quarantined.count)")
        try store.close()
    }
}
