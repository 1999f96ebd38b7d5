import ArgumentParser
import DBus
import Foundation
import RelinkAPI
import RelinkClient
import RelinkModel
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `relinkctl transfer ID PERIPHERAL SERVICE CHAR FILE [--no-response] [--resume] [--chunk-size N] [--detach]`.
struct TransferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer", abstract: "Write a file to a characteristic in chunks, durably (an OTA firmware update).",
        discussion: """
            relinkd writes the file (at most 16 MiB, passed as a descriptor and read whole by relinkd before it \
            replies) in chunks of the link's largest single-packet value, each \
            once the one before is confirmed, and keeps going if relinkctl stops (Central1.StartTransfer). \
            relinkctl follows its events: a progress bar on a terminal, a line per progress event otherwise; \
            it exits 0 when the transfer completed, 1 when it failed (the error names the offset reached). \
            --detach prints the transfer's identifier and exits at once.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments
    @Argument(help: "The file to write.") var file: String
    @Flag(name: .customLong("no-response"), help: "Write commands (without response) instead of write requests.") var noResponse = false
    @Flag(help: "After a link drop or a relinkd restart, go on from the last confirmed chunk instead of failing.") var resume = false
    @Option(name: .customLong("chunk-size"), help: "The largest chunk, 1 to 512 (default: the link's ATT MTU - 3).") var chunkSize: Int?
    @Flag(help: "Start the transfer and exit without following it.") var detach = false

    /// The file's length.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): not a readable regular file, empty, over 16 MiB.
    func length() throws(RelinkClientError) -> Int {
        guard FileManager.default.isReadableFile(atPath: file),
              let attributes = try? FileManager.default.attributesOfItem(atPath: file),
              attributes[.type] as? FileAttributeType == .typeRegular, let size = attributes[.size] as? Int else {
            throw RelinkClientError(.invalidArguments, "Cannot read \(RelinkArguments.echo(file)) (a regular file).")
        }
        guard size >= 1, size <= TransferRecord.maximumLength else {
            throw RelinkClientError(.invalidArguments, "\(RelinkArguments.echo(file)) is \(size) bytes: a transfer takes 1 to \(TransferRecord.maximumLength).")
        }
        return size
    }

    /// Checks the file and the chunk size before relinkd is called.
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in
            _ = try length()
            if let chunkSize, !(1...WriteLimits.maximumAttributeLength).contains(chunkSize) {
                throw RelinkClientError(.invalidArguments, "--chunk-size must be 1 to \(WriteLimits.maximumAttributeLength), not \(chunkSize).")
            }
        }
    }

    /// Starts the transfer, then (unless `--detach`) follows its events to its end.
    func run() async throws {
        let length = try length()
        let options = RelinkTransferOptions(withResponse: !noResponse, resume: resume, chunkSize: chunkSize)
        let identifier = target.identifier
        let path = try APIPath.central(for: identifier).rawValue
        let (transfer, end) = try await global.withManager(identifier: identifier) { manager in
            let signals = try await manager.eventSignals()
            let last = try await manager.centralProperties(identifier).lastSequence
            let transfer = try await manager.startTransfer(identifier, peripheral: target.peripheral, service: target.service,
                                                           characteristic: target.characteristic, fileAt: file, options: options)
            guard !detach else { return (transfer, TransferEvent?.none) }
            let owners = try await manager.relinkdOwnerChanges()
            try await manager.watch(identifier, after: last)
            let bar = ProgressBar(transfer: transfer, length: length, json: global.json)
            let seen = LastSeen(last)
            return try await withThrowingTaskGroup(of: TransferEvent?.self) { group in
                // A relinkd that comes back (a restart; a transfer with
                // --resume goes on) forgot this attachment: watch again
                // from the last event seen, so none is missed.
                group.addTask {
                    for try await change in owners where change.newOwner != nil {
                        try? await manager.watch(identifier, after: seen.value.load(ordering: .relaxed))
                    }
                    return nil
                }
                group.addTask {
                    for try await (from, event) in signals where from == path {
                        seen.value.max(event.sequence, ordering: .relaxed)
                        guard let e = event.transferEvent, e.status.transfer == transfer else { continue }
                        switch e {
                        case .progress(let status): bar.show(status.offset)
                        case .completed, .failed:
                            bar.finish(e)
                            return e
                        }
                    }
                    return nil
                }
                let end = try await group.next() ?? nil
                group.cancelAll()
                signals.cancel()
                guard let end else {
                    throw RelinkClientError(.init(DBusError.Name.disconnected.rawValue),
                                            "The connection to the bus ended; transfer \(transfer) goes on in relinkd (relinkctl events \(identifier)).")
                }
                return (transfer, end)
            }
        }
        if global.json {
            var document = target.json.merging(["transfer": transfer.description, "length": length]) { $1 }
            if let end {
                document["offset"] = end.status.offset
                document["outcome"] = end.name
                if case .failed(_, let reason) = end { document["reason"] = ["errorName": reason.errorName, "message": reason.message] }
            }
            Output.json(document)
        } else if end == nil {
            Output.line(transfer.description)
        }
        if case .failed(let status, let reason)? = end {
            throw RelinkClientError(.init(reason.errorName), "transfer \(transfer) failed at byte \(status.offset) of \(status.length): \(reason.message)")
        }
    }
}

/// The sequence number of the last event a follower saw.
final class LastSeen: Sendable {
    /// The number.
    let value: Atomic<UInt64>
    init(_ value: UInt64) { self.value = Atomic(value) }
}

/// The progress of one transfer on stdout: a bar redrawn in place on a
/// terminal, one line per progress event otherwise, nothing with `--json`.
struct ProgressBar: Sendable {
    let transfer: TransferID
    let length: Int
    let json: Bool
    let terminal = isatty(STDOUT_FILENO) == 1

    /// Shows `offset` bytes of ``length`` confirmed.
    func show(_ offset: Int) {
        guard !json else { return }
        let percent = length > 0 ? offset * 100 / length : 100
        if terminal {
            let width = 30, filled = length > 0 ? offset * width / length : width
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            print("\r[\(bar)] \(percent)% \(offset)/\(length) bytes", terminator: "")
        } else {
            print("transfer \(transfer): \(offset)/\(length) bytes (\(percent)%)")
        }
        Output.flush()
    }

    /// The transfer ended: the bar at its last offset, then the outcome on its own line.
    func finish(_ end: TransferEvent) {
        guard !json else { return }
        show(end.status.offset)
        if terminal { print("") }
        if case .completed(let status) = end { print("transfer \(transfer) completed: \(status.length) bytes") }
        Output.flush()
    }
}
