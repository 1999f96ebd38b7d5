import DBus
import RelinkAPI
import RelinkModel

// Central1's transfer methods (docs/api/Central1.md, "Transfers").
extension APIInterfaces {
    /// `StartTransfer`, `Transfers` and `CancelTransfer` of one identifier.
    func transferMethods(_ id: RestoreIdentifier) -> [DBusMethod] {
        let p = DBusArgument("peripheral", .string), service = DBusArgument("service", .string)
        let characteristic = DBusArgument("characteristic", .string)
        let daemon = self.daemon, identity = self.identity
        func method(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument],
                    _ parse: @escaping @Sendable (ControlArguments) throws(RelinkError) -> TransferRequest) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs) { call in
                let request = try parse(try ControlArguments(call, count: inArgs.count))
                return try await daemon.submit(.transfer(id, request), from: try await identity.caller(of: call)).get().values
            }
        }
        return [
            method(Central1Member.startTransfer.rawValue,
                   [p, service, characteristic, DBusArgument("data", .array(.byte)), DBusArgument("options", .dictionary(key: .string, value: .variant))],
                   [DBusArgument("transfer", .string)]) { a throws(RelinkError) in
                let key = try a.characteristic(1), peripheral = try a.peripheral(0)
                let data = try a.bytes(3, "data", limit: TransferRecord.maximumLength)
                guard !data.isEmpty else { throw .invalidArguments("data is empty: a transfer takes 1 to \(TransferRecord.maximumLength) bytes") }
                let o = try a.options(4, allowed: ["with_response": .boolean, "resume": .boolean, "chunk_size": .uint16])
                var withResponse = true, resume = false
                var chunkSize: Int?
                if case .boolean(let b)? = o["with_response"] { withResponse = b }
                if case .boolean(let b)? = o["resume"] { resume = b }
                if case .uint16(let n)? = o["chunk_size"] {
                    guard (1...WriteLimits.maximumAttributeLength).contains(Int(n)) else {
                        throw .invalidArguments("chunk_size must be 1 to \(WriteLimits.maximumAttributeLength), got \(n)")
                    }
                    chunkSize = Int(n)
                }
                return .start(peripheral, key, data: data, withResponse: withResponse, resume: resume, chunkSize: chunkSize)
            },
            method(Central1Member.transfers.rawValue, [], [DBusArgument("transfers", .array(.dictionary(key: .string, value: .variant)))]) { _ throws(RelinkError) in
                .list
            },
            method(Central1Member.cancelTransfer.rawValue, [DBusArgument("transfer", .string)], []) { a throws(RelinkError) in
                let text = try a.string(0, "transfer")
                do { return .cancel(try TransferID(parsing: text)) } catch { throw .invalidArguments("\(error)") }
            },
        ]
    }
}
