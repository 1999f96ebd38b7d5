import BlueZ
import DBus
import Logging
import RelinkAPI
import RelinkModel
import RelinkStore
import Restoration

// Durable transfers: a client's bytes written to one characteristic in
// chunks, each sent when BlueZ confirmed the one before (a write request's
// reply from the peripheral; a write command's reply from bluetoothd),
// with the confirmed offset stored as it moves, so that the transfer
// outlives its client and, when it asked for `resume`, a relinkd restart
// or a link drop (docs/api/Central1.md, "Transfers").
extension Daemon {
    /// The shortest time between two `transfer-progress` events of a transfer.
    static let transferProgressInterval: Duration = .milliseconds(500)
    /// How long after a failed attempt (the link still up) the chunk is tried again.
    static let transferRetryDelay: Duration = .seconds(1)
    /// Failed attempts in a row, the link staying up, before the transfer fails.
    static let transferRetryLimit = 5
    /// How far a transfer's confirmed offset may run ahead of the one in
    /// the store: beyond it, the next chunk waits for the offset's commit.
    /// What a crash may make the peripheral receive twice is at most this
    /// and the chunk in flight.
    static let transferUnstoredWindow = 8 * 1024
    /// The smallest chunk a transfer shrinks to when the peripheral refuses
    /// lengths (the ATT default MTU's largest value); a refusal at this
    /// size fails the transfer.
    static let smallestTransferChunk = 20

    /// A transfer call: `StartTransfer`, `Transfers`, `CancelTransfer`.
    func transferCall(_ id: RestoreIdentifier, _ request: TransferRequest) async throws(RelinkError) -> APIResult {
        switch request {
        case .start(let ref, let key, let data, let withResponse, let resume, let chunkSize):
            let transfer = try await startTransfer(id, ref, key, data: data, withResponse: withResponse, resume: resume, chunkSize: chunkSize)
            return APIResult(values: [.string(transfer.description)])
        case .list:
            let rows = writeStreams.transfers.running.values.filter { $0.record.identifier == id }
                .sorted { ($0.record.createdAt, $0.record.id) < ($1.record.createdAt, $1.record.id) }
            var listed: [DBusValue] = []
            for row in rows { listed.append(await transferProperties(row)) }
            return APIResult(values: [.array(.dictionary(key: .string, value: .variant), listed)])
        case .cancel(let transfer):
            guard let t = writeStreams.transfers.running[transfer], t.record.identifier == id else {
                throw RelinkError(.unknownTransfer, "\(id) has no transfer \(transfer) under way")
            }
            writeStreams.transfers.running[transfer] = nil
            var request = try Self.eventRequest(.transfer(.failed(t.record.status, reason: ConnectionFailure(
                .cancelled, errorName: RelinkErrorName.cancelled.rawValue,
                message: "cancelled by the client at byte \(t.record.confirmed) of \(t.record.length)"))), to: [id])
            request.mutations.insert(.removeTransfer(transfer), at: 0)
            try await commitNow(request)
            logger.info("transfer cancelled", metadata: transferFields(t.record))
            return APIResult()
        }
    }

    /// Checks and stores a new transfer, then sends its first chunk.
    /// - Throws: `UnknownPeripheral`, `NotConnected`, `UnknownCharacteristic`
    ///   (as `Write`), `NotSupported` (the characteristic does not take that
    ///   write type), `ValueTooLong` (a chunk size over the link's largest),
    ///   `InProgress` (another transfer, or a write stream for a transfer
    ///   without response, holds the characteristic), `StoreFailed`.
    func startTransfer(_ id: RestoreIdentifier, _ ref: PeripheralRef, _ key: CharacteristicKey, data: [UInt8], withResponse: Bool,
                       resume: Bool, chunkSize: Int?) async throws(RelinkError) -> TransferID {
        let peripheral = try knownPeripheral(ref)
        let path = try await locate(ref, key)
        let mirror = await bluez.mirror
        guard let c = mirror.characteristic(path) else { throw RelinkError(.notConnected, "\(ref): the characteristic is no longer on the link") }
        let takes = withResponse ? c.flags.contains("write") : c.canWriteWithoutResponse
        guard takes else {
            throw RelinkError(.notSupported, "\(key.characteristic) does not take writes \(withResponse ? "with" : "without") response (its flags: \(c.flags.joined(separator: ", ")))")
        }
        if let chunkSize {
            let limits = mirror.devicePath(containing: path).flatMap { mirror.writeLimits(of: $0) } ?? WriteLimits(mtu: WriteLimits.defaultMTU)
            guard chunkSize <= limits.maximum(withResponse: withResponse) else {
                throw RelinkError(.valueTooLong, "chunk_size \(chunkSize): the largest value \(withResponse ? "with" : "without") response on this link is \(limits.maximum(withResponse: withResponse)) bytes")
            }
        }
        if let other = writeStreams.transfers.running.values.first(where: { $0.record.peripheral == peripheral && $0.record.characteristic == key }) {
            throw RelinkError(.inProgress, "transfer \(other.record.id) is writing \(key.characteristic) (byte \(other.record.confirmed) of \(other.record.length))")
        }
        if !withResponse, await writeStream(at: path, key) != nil {
            throw RelinkError(.inProgress, "a write stream holds \(key.characteristic): close it first")
        }
        let record: TransferRecord
        do {
            record = try TransferRecord(identifier: id, peripheral: peripheral, characteristic: key, data: data, withResponse: withResponse,
                                        resume: resume, chunkSize: chunkSize)
        } catch { throw RelinkError(.invalidArguments, "\(error)") }
        try await commit([.putTransfer(record)])
        writeStreams.transfers.running[record.id] = RunningTransfer(record: record, lastProgress: clock.now)
        logger.info("transfer started", metadata: transferFields(record))
        await pumpTransfer(record.id)
        return record.id
    }

    /// Sends the transfer's next chunk when none is in flight and its link
    /// is up; otherwise it waits for the link (``transfersLinkChanged(_:)``),
    /// or fails when it did not ask for `resume`.
    func pumpTransfer(_ transfer: TransferID) async {
        guard var t = writeStreams.transfers.running[transfer], !t.inFlight, !t.retryPending else { return }
        guard t.unstored <= Self.transferUnstoredWindow else { return }  // the offset's commit first (transfersCommitted)
        guard let device = await linkedDevice(of: t.record.peripheral), device.servicesResolved else {
            if !t.record.resume { failTransfer(transfer, Self.linkLost(t.record)) }
            return
        }
        let mirror = await bluez.mirror
        guard let c = mirror.characteristic(device: device.path, service: t.record.characteristic.service.string,
                                            characteristic: t.record.characteristic.characteristic.string) else {
            // Real bluetoothd signals ServicesResolved before the objects.
            retryTransfer(transfer, after: ConnectionFailure(.deviceGone, errorName: RelinkErrorName.unknownCharacteristic.rawValue,
                                                             message: "\(t.record.characteristic) is not on the link"))
            return
        }
        let chunk = Array(t.record.nextChunk(mirror.writeLimits(of: device.path) ?? WriteLimits(mtu: WriteLimits.defaultMTU))
            .prefix(t.peerLargest ?? .max))
        guard !chunk.isEmpty else { return }
        t.inFlight = true
        t.linkDropped = false
        writeStreams.transfers.running[transfer] = t
        let end = t.record.confirmed + chunk.count, bluez = self.bluez, path = c.path, withResponse = t.record.withResponse
        loop.spawned.append {
            do {
                try await bluez.write(path, chunk, withResponse: withResponse)
                return [.transfer(.chunkDone(transfer, end: end, failure: nil))]
            } catch {
                return [.transfer(.chunkDone(transfer, end: end, failure: FailureMapping.failure(error)))]
            }
        }
    }

    /// A transfer's input: a chunk's outcome, a retry.
    func handleTransfer(_ input: TransferInput) async {
        switch input {
        case .chunkDone(let transfer, let end, let failure):
            await chunkDone(transfer, end: end, failure: failure)
        case .retry(let transfer):
            guard writeStreams.transfers.running[transfer] != nil else { return }
            writeStreams.transfers.running[transfer]?.retryPending = false
            await pumpTransfer(transfer)
        }
    }

    private func chunkDone(_ transfer: TransferID, end: Int, failure: ConnectionFailure?) async {
        guard var t = writeStreams.transfers.running[transfer], t.inFlight else { return }  // cancelled meanwhile
        t.inFlight = false
        writeStreams.transfers.running[transfer] = t
        if let failure {
            let linkUp = await linkedDevice(of: t.record.peripheral)?.servicesResolved == true
            logger.notice("a transfer's chunk was not confirmed", metadata: transferFields(t.record).merging(.journal([
                .error: "\(failure.errorName)", .errorClass: "\(failure.failureClass.rawValue)"])) { $1 })
            if !linkUp || t.linkDropped {
                // Link lost: it waits for the link (resume) or fails now.
                guard t.record.resume else {
                    failTransfer(transfer, Self.linkLost(t.record))
                    return
                }
                writeStreams.transfers.running[transfer]?.linkDropped = false
                if linkUp { await pumpTransfer(transfer) }  // back already
                return
            }
            let sent = end - t.record.confirmed
            if FailureMapping.isLengthRefusal(failure), sent > Self.smallestTransferChunk {
                // Too long for this characteristic: smaller chunks from now on.
                let smaller = max(Self.smallestTransferChunk, sent - max(1, sent / 8))
                writeStreams.transfers.running[transfer]?.peerLargest = smaller
                logger.notice("the peripheral refused a chunk's length: smaller chunks", metadata: transferFields(t.record).merging(.journal([
                    .length: "\(smaller)"])) { $1 })
                await pumpTransfer(transfer)
                return
            }
            switch failure.failureClass {
            case .transient, .deviceGone, .inProgress, .timeout, .unknown:
                retryTransfer(transfer, after: failure)  // a drop BlueZ told of before the mirror, a busy BlueZ
            default:
                failTransfer(transfer, failure)  // the peripheral or BlueZ refused the write
            }
            return
        }
        t.record.confirmed = end
        t.retries = 0
        guard end < t.record.length else {
            writeStreams.transfers.running[transfer] = nil
            emitTransfer(.completed(t.record.status), removing: true, of: t.record)
            logger.info("transfer completed", metadata: transferFields(t.record))
            return
        }
        if clock.now - t.lastProgress >= Self.transferProgressInterval {
            t.lastProgress = clock.now
            emitTransfer(.progress(t.record.status), removing: false, of: t.record)
        }
        writeStreams.transfers.running[transfer] = t
        storeTransferOffset(transfer)
        await pumpTransfer(transfer)
    }

    /// Stores a transfer's confirmed offset, one commit in flight per
    /// transfer: the loop does not wait for the disk, and the chunks
    /// confirmed while a commit is on its way share the next one (what a
    /// crash may make the peripheral receive twice: docs/api/Central1.md).
    /// `all`: also while one is on its way (relinkd stopping).
    func storeTransferOffset(_ transfer: TransferID, all: Bool = false) {
        guard var t = writeStreams.transfers.running[transfer] else { return }
        if let storing = t.storing, writes.inFlight[storing.ticket] == nil {
            t.stored = max(t.stored, storing.offset)  // a failed commit was journalled; the next writes a later offset
            t.storing = nil
        }
        if t.record.confirmed > max(t.stored, t.storing?.offset ?? 0), t.storing == nil || all {
            let ticket = submit(RestoreBatch.Request(mutations: [.setTransferOffset(transfer, confirmed: t.record.confirmed)]))
            t.storing = (ticket, t.record.confirmed)
        }
        writeStreams.transfers.running[transfer] = t
    }

    /// Commits came back: each transfer's offset is stored further, and a
    /// transfer that waited for its offset's commit goes on.
    func transfersCommitted() async {
        for transfer in writeStreams.transfers.running.keys.sorted() where writeStreams.transfers.running[transfer]?.storing != nil {
            storeTransferOffset(transfer)
            await pumpTransfer(transfer)
        }
    }

    /// relinkd stops: every confirmed offset goes to the store with the last commits.
    func storeTransferOffsets() {
        for transfer in writeStreams.transfers.running.keys.sorted() { storeTransferOffset(transfer, all: true) }
    }

    /// Tries the chunk again after ``transferRetryDelay``; fails the
    /// transfer after ``transferRetryLimit`` attempts in a row.
    private func retryTransfer(_ transfer: TransferID, after failure: ConnectionFailure) {
        guard var t = writeStreams.transfers.running[transfer] else { return }
        t.retries += 1
        guard t.retries <= Self.transferRetryLimit else {
            failTransfer(transfer, failure)
            return
        }
        t.retryPending = true
        writeStreams.transfers.running[transfer] = t
        input(.transfer(.retry(transfer)), after: Self.transferRetryDelay)
    }

    /// Ends a transfer with `transfer-failed` (naming the offset the
    /// peripheral confirmed) and forgets it, in one commit.
    func failTransfer(_ transfer: TransferID, _ reason: ConnectionFailure) {
        guard let t = writeStreams.transfers.running.removeValue(forKey: transfer) else { return }
        emitTransfer(.failed(t.record.status, reason: reason), removing: true, of: t.record)
        logger.warning("transfer failed", metadata: transferFields(t.record).merging(.journal([
            .error: "\(reason.errorName)", .errorClass: "\(reason.failureClass.rawValue)"])) { $1 })
    }

    /// Stores a transfer's event (and, when it ended, the row's removal) in the next commit.
    private func emitTransfer(_ event: TransferEvent, removing: Bool, of record: TransferRecord) {
        var mutations: [StoreMutation] = removing ? [.removeTransfer(record.id)] : []
        do {
            let request = try Self.eventRequest(.transfer(event), to: [record.identifier])
            mutations += request.mutations
            enqueueGathered(RestoreBatch.Request(mutations: mutations, notes: request.notes))
        } catch {
            logger.error("cannot send \(event.name)", metadata: transferFields(record).merging(.journal([.error: "\(error)"])) { $1 })
            if !mutations.isEmpty { enqueueGathered(RestoreBatch.Request(mutations: mutations)) }
        }
    }

    /// A peripheral's link came up or went down (`Connected`,
    /// `ServicesResolved`): its transfers go on, wait, or fail.
    func transfersLinkChanged(_ peripheral: PeripheralID) async {
        let ids = writeStreams.transfers.ids(on: peripheral)
        guard !ids.isEmpty else { return }
        let up = await linkedDevice(of: peripheral)?.servicesResolved == true
        for transfer in ids {
            if !up { writeStreams.transfers.running[transfer]?.linkDropped = true }
            await pumpTransfer(transfer)
        }
    }

    /// Start-up: the stored transfers. One that asked for `resume` goes on
    /// from its stored offset once its link is up; any other fails with
    /// `Interrupted`, naming that offset.
    func transfersLoaded(_ records: [TransferRecord]) async {
        for record in records where core.identifiers.contains(record.identifier) {
            guard record.resume else {
                emitTransfer(.failed(record.status, reason: ConnectionFailure(
                    .transient, errorName: RelinkErrorName.interrupted.rawValue,
                    message: "relinkd stopped during the transfer, at byte \(record.confirmed) of \(record.length) (it did not ask for resume)")),
                             removing: true, of: record)
                logger.warning("transfer interrupted by a restart", metadata: transferFields(record))
                continue
            }
            writeStreams.transfers.running[record.id] = RunningTransfer(record: record, lastProgress: clock.now)
            logger.notice("transfer resumed after a restart", metadata: transferFields(record))
        }
        for transfer in writeStreams.transfers.running.keys.sorted() { await pumpTransfer(transfer) }
    }

    /// The identifier is gone (its rows went with it): its transfers stop.
    func transfersUnregistered(_ id: RestoreIdentifier) {
        writeStreams.transfers.running = writeStreams.transfers.running.filter { $0.value.record.identifier != id }
    }

    /// The link dropped under a transfer that did not ask for `resume`.
    static func linkLost(_ record: TransferRecord) -> ConnectionFailure {
        ConnectionFailure(.transient, errorName: RelinkErrorName.linkLost.rawValue,
                          message: "the link went down at byte \(record.confirmed) of \(record.length)")
    }

    /// One transfer as `Transfers` lists it.
    private func transferProperties(_ t: RunningTransfer) async -> DBusValue {
        let linked = await linkedDevice(of: t.record.peripheral)?.servicesResolved == true
        let r = t.record
        let entries: [(String, DBusValue)] = [
            ("transfer", .string(r.id.description)), ("peripheral", .string("\(r.peripheral)")),
            ("service", .string(r.characteristic.service.string)), ("characteristic", .string(r.characteristic.characteristic.string)),
            ("offset", .uint64(UInt64(r.confirmed))), ("length", .uint64(UInt64(r.length))),
            ("state", .string(linked ? "sending" : "waiting-for-link")),
            ("with_response", .boolean(r.withResponse)), ("resume", .boolean(r.resume)),
            ("chunk_size", .uint16(UInt16(r.chunkSize ?? 0))),
        ]
        return .dictionary(key: .string, value: .variant, entries.map { .init(.string($0.0), .variant($0.1)) })
    }

    /// The journal fields of a transfer.
    func transferFields(_ record: TransferRecord) -> Logger.Metadata {
        deviceFields(record.peripheral).merging(.journal([
            .restoreID: "\(record.identifier)", .characteristic: "\(record.characteristic)", .transfer: "\(record.id)",
            .offset: "\(record.confirmed)", .length: "\(record.length)",
        ])) { $1 }
    }
}
