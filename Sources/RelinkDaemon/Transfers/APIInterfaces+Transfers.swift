import DBus
import RelinkAPI
import RelinkModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Central1's transfer methods (docs/api/Central1.md, "Transfers").
extension APIInterfaces {
    /// `StartTransfer`, `Transfers` and `CancelTransfer` of one identifier.
    func transferMethods(_ id: RestoreIdentifier) -> [DBusMethod] {
        let p = DBusArgument("peripheral", .string), service = DBusArgument("service", .string)
        let characteristic = DBusArgument("characteristic", .string)
        let daemon = self.daemon, identity = self.identity
        let options = DBusArgument("options", .dictionary(key: .string, value: .variant))
        func method(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument],
                    _ parse: @escaping @Sendable (ControlArguments) throws(RelinkError) -> TransferRequest) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs, ordered: true) { call in
                let request = try parse(try ControlArguments(call, count: inArgs.count))
                return try await daemon.submit(.transfer(id, request), from: try await identity.caller(of: call), queued: call.endTurn).get().values
            }
        }
        return [
            method(Central1Member.startTransfer.rawValue,
                   [p, service, characteristic, DBusArgument("data", .array(.byte)), options], [DBusArgument("transfer", .string)]) { a throws(RelinkError) in
                let data = try a.bytes(3, "data", limit: TransferRecord.maximumInlineLength)
                return try Self.startRequest(a, data: data)
            },
            method(Central1Member.startTransferFromFile.rawValue,
                   [p, service, characteristic, DBusArgument("file", .unixFD), options], [DBusArgument("transfer", .string)]) { a throws(RelinkError) in
                guard case .unixFD(let file) = a.values[3] else { throw RelinkError(.invalidArguments, "file must be a file descriptor (h)") }
                return try Self.startRequest(a, data: try Self.contents(of: file))
            },
            method(Central1Member.transfers.rawValue, [], [DBusArgument("transfers", .array(.dictionary(key: .string, value: .variant)))]) { _ throws(RelinkError) in
                .list
            },
            method(Central1Member.cancelTransfer.rawValue, [DBusArgument("transfer", .string)], []) { a throws(RelinkError) in
                let text = try a.string(0, "transfer")
                do { return .cancel(try TransferID(parsing: text)) } catch { throw RelinkError(.invalidArguments, "\(error)") }
            },
        ]
    }

    /// `StartTransfer`'s and `StartTransferFromFile`'s request: the
    /// characteristic at 0-2, the options at 4.
    static func startRequest(_ a: ControlArguments, data: [UInt8]) throws(RelinkError) -> TransferRequest {
        let key = try a.characteristic(1), peripheral = try a.peripheral(0)
        guard !data.isEmpty else { throw RelinkError(.invalidArguments, "no bytes to transfer: a transfer takes 1 to \(TransferRecord.maximumLength) bytes") }
        let o = try a.options(4, allowed: ["with_response": .boolean, "resume": .boolean, "chunk_size": .uint16])
        var withResponse = true, resume = false
        var chunkSize: Int?
        if case .boolean(let b)? = o["with_response"] { withResponse = b }
        if case .boolean(let b)? = o["resume"] { resume = b }
        if case .uint16(let n)? = o["chunk_size"] {
            guard (1...WriteLimits.maximumAttributeLength).contains(Int(n)) else {
                throw RelinkError(.invalidArguments, "chunk_size must be 1 to \(WriteLimits.maximumAttributeLength), got \(n)")
            }
            chunkSize = Int(n)
        }
        return .start(peripheral, key, data: data, withResponse: withResponse, resume: resume, chunkSize: chunkSize)
    }

    /// The whole content of a regular file the caller passed, read now (the
    /// caller may close or delete it after the reply).
    /// - Throws: `InvalidArguments`: not a regular file, more than
    ///   ``TransferRecord/maximumLength`` bytes, unreadable.
    static func contents(of file: UnixFD) throws(RelinkError) -> [UInt8] {
        var info = stat()
        guard fstat(file.rawValue, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw RelinkError(.invalidArguments, "file must be a regular file, open for reading")
        }
        guard info.st_size <= TransferRecord.maximumLength else {
            throw RelinkError(.invalidArguments, "the file is \(info.st_size) bytes: a transfer takes at most \(TransferRecord.maximumLength)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var read = 0
        while read < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(file.rawValue, $0.baseAddress.map { $0 + read }, $0.count - read, off_t(read)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw RelinkError(.invalidArguments, "the file could not be read whole (\(read) of \(bytes.count) bytes; errno \(errno))") }
            read += n
        }
        return bytes
    }
}
