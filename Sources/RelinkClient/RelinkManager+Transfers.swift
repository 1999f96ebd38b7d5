import DBus
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import RelinkModel
import RelinkAPI

/// How a transfer writes (`Central1.StartTransfer`'s options).
public struct RelinkTransferOptions: Sendable, Hashable {
    /// Write requests, each answered by the peripheral (true, the default), or write commands.
    public var withResponse: Bool
    /// After a link drop or a relinkd restart, go on from the last
    /// confirmed chunk instead of failing.
    public var resume: Bool
    /// The largest chunk, 1 to 512; nil: the link's largest single-packet value (ATT MTU − 3).
    public var chunkSize: Int?

    /// Options; by default with response, no resume, chunks of the link's largest single-packet value.
    public init(withResponse: Bool = true, resume: Bool = false, chunkSize: Int? = nil) {
        self.withResponse = withResponse
        self.resume = resume
        self.chunkSize = chunkSize
    }

    var dictionary: [String: DBusValue] {
        var o: [String: DBusValue] = ["with_response": .boolean(withResponse), "resume": .boolean(resume)]
        if let chunkSize { o["chunk_size"] = .uint16(UInt16(clamping: chunkSize)) }
        return o
    }
}

/// A transfer under way, as `Central1.Transfers` lists it.
public struct RelinkTransfer: Sendable, Hashable {
    /// Its identifier.
    public var id: TransferID
    /// The peripheral's UUID.
    public var peripheral: String
    /// The service UUID.
    public var service: String
    /// The characteristic UUID.
    public var characteristic: String
    /// Bytes the peripheral confirmed.
    public var offset: UInt64
    /// The transfer's length in bytes.
    public var length: UInt64
    /// `sending` or `waiting-for-link`.
    public var state: String
    /// Write requests rather than commands.
    public var withResponse: Bool
    /// Whether a link drop or a restart resumes it.
    public var resume: Bool
    /// The chunk size asked for (0: the link's largest).
    public var chunkSize: UInt16

    init(_ p: [String: DBusValue]) throws(RelinkClientError) {
        func value(_ key: String) -> DBusValue? { if case .variant(let v)? = p[key] { v } else { p[key] } }
        guard case .string(let id)? = value("transfer"), let transfer = try? TransferID(parsing: id),
              case .string(let peripheral)? = value("peripheral"), case .string(let service)? = value("service"),
              case .string(let characteristic)? = value("characteristic"), case .uint64(let offset)? = value("offset"),
              case .uint64(let length)? = value("length"), case .string(let state)? = value("state"),
              case .boolean(let withResponse)? = value("with_response"), case .boolean(let resume)? = value("resume"),
              case .uint16(let chunkSize)? = value("chunk_size") else { throw .badReply("Transfers", "a transfer lacks a field: \(p)") }
        (self.id, self.peripheral, self.service, self.characteristic) = (transfer, peripheral, service, characteristic)
        (self.offset, self.length, self.state, self.withResponse, self.resume, self.chunkSize) = (offset, length, state, withResponse, resume, chunkSize)
    }
}

extension RelinkManager {
    /// `Central1.StartTransfer`: relinkd writes `data` to the characteristic
    /// in chunks, each once the one before is confirmed, durably; progress
    /// comes as `transfer-progress`, the end as `transfer-completed` or
    /// `transfer-failed` events.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (also before sending: empty
    ///   `data`, more than 1 MiB, a chunk size out of 1...512), `UnknownIdentifier`,
    ///   `UnknownPeripheral`, `UnknownCharacteristic`, `NotConnected`, `NotSupported`,
    ///   `ValueTooLong`, `InProgress`, `StoreFailed`; unreachable.
    public func startTransfer(_ identifier: String, peripheral: String, service: String, characteristic: String, data: [UInt8],
                              options: RelinkTransferOptions = .init()) async throws(RelinkClientError) -> TransferID {
        guard !data.isEmpty, data.count <= TransferRecord.maximumInlineLength else {
            throw .invalid("A transfer of bytes takes 1 to \(TransferRecord.maximumInlineLength) bytes, not \(data.count) (a larger one: from a file).")
        }
        return try await start(identifier, Central1Member.startTransfer.rawValue, try gattArguments(peripheral, service, characteristic)
            + [.array(.byte, data.map(DBusValue.byte))], options)
    }

    /// `Central1.StartTransferFromFile` with the file at `path` (1 byte to
    /// 16 MiB), passed as a descriptor; relinkd reads it whole before it
    /// replies. Over a bus that cannot pass descriptors, a file of at most
    /// 1 MiB goes as bytes (`StartTransfer`).
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (also before sending: the file
    ///   cannot be opened, is empty, too large), and as ``startTransfer(_:peripheral:service:characteristic:data:options:)``.
    public func startTransfer(_ identifier: String, peripheral: String, service: String, characteristic: String, fileAt path: String,
                              options: RelinkTransferOptions = .init()) async throws(RelinkClientError) -> TransferID {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .invalid("Cannot open \(RelinkArguments.echo(path)) (errno \(errno)).") }
        let file = UnixFD(takingOwnershipOf: fd)
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 1, info.st_size <= TransferRecord.maximumLength else {
            throw .invalid("\(RelinkArguments.echo(path)) must be a regular file of 1 to \(TransferRecord.maximumLength) bytes.")
        }
        guard connection.canPassUnixFDs else {
            guard let contents = FileManager.default.contents(atPath: path) else { throw .invalid("Cannot read \(RelinkArguments.echo(path)).") }
            return try await startTransfer(identifier, peripheral: peripheral, service: service, characteristic: characteristic,
                                           data: [UInt8](contents), options: options)
        }
        return try await start(identifier, Central1Member.startTransferFromFile.rawValue, try gattArguments(peripheral, service, characteristic)
            + [.unixFD(file)], options)
    }

    private func start(_ identifier: String, _ method: String, _ arguments: [DBusValue],
                       _ options: RelinkTransferOptions) async throws(RelinkClientError) -> TransferID {
        if let size = options.chunkSize, !(1...WriteLimits.maximumAttributeLength).contains(size) {
            throw .invalid("The chunk size must be 1 to \(WriteLimits.maximumAttributeLength), not \(size).")
        }
        let reply = try await central(identifier, method, arguments + [options.dictionary.variantDictionary])
        let text = try decode(reply, method, String.self)
        do { return try TransferID(parsing: text) } catch { throw .badReply(method, "\(error)") }
    }

    /// `Central1.Transfers`: the identifier's transfers under way, oldest first.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`; unreachable.
    public func transfers(_ identifier: String) async throws(RelinkClientError) -> [RelinkTransfer] {
        let reply = try await central(identifier, Central1Member.transfers.rawValue)
        var listed: [RelinkTransfer] = []
        let entries: [[String: DBusValue]] = try decode(reply, "Transfers", [[String: DBusValue]].self)
        for entry in entries { listed.append(try RelinkTransfer(entry)) }
        return listed
    }

    /// `Central1.CancelTransfer`: a `transfer-failed` event (`Cancelled`) ends it.
    /// - Throws: ``RelinkClientError``: `UnknownTransfer`, `UnknownIdentifier`, `StoreFailed`; unreachable.
    public func cancelTransfer(_ identifier: String, transfer: TransferID) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.cancelTransfer.rawValue, [.string(transfer.description)])
    }
}

extension RelinkCentral {
    /// Writes `data` (a firmware image, a file) to a characteristic in
    /// chunks, each sent once the one before is confirmed, done by relinkd:
    /// it goes on when this program leaves, and, with `resume`, across a
    /// link drop or a relinkd restart. Follow it with the events
    /// (``RelinkClientEvent/transferEvent``).
    /// - Throws: ``RelinkClientError``: as ``RelinkManager/startTransfer(_:peripheral:service:characteristic:data:options:)``.
    public func startTransfer(peripheral: String, service: String, characteristic: String, data: [UInt8],
                              options: RelinkTransferOptions = .init()) async throws(RelinkClientError) -> TransferID {
        try await connected().startTransfer(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic,
                                            data: data, options: options)
    }

    /// ``startTransfer(peripheral:service:characteristic:data:options:)`` with
    /// the file at `path` (1 byte to 16 MiB), passed as a descriptor.
    /// - Throws: ``RelinkClientError``: as ``RelinkManager/startTransfer(_:peripheral:service:characteristic:fileAt:options:)``.
    public func startTransfer(peripheral: String, service: String, characteristic: String, fileAt path: String,
                              options: RelinkTransferOptions = .init()) async throws(RelinkClientError) -> TransferID {
        try await connected().startTransfer(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic,
                                            fileAt: path, options: options)
    }

    /// The identifier's transfers under way.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`, `NotConnected`; unreachable.
    public func transfers() async throws(RelinkClientError) -> [RelinkTransfer] {
        try await connected().transfers(restoreIdentifier)
    }

    /// Cancels a transfer under way.
    /// - Throws: ``RelinkClientError``: `UnknownTransfer`, `UnknownIdentifier`, `StoreFailed`, `NotConnected`; unreachable.
    public func cancelTransfer(_ transfer: TransferID) async throws(RelinkClientError) {
        try await connected().cancelTransfer(restoreIdentifier, transfer: transfer)
    }
}
