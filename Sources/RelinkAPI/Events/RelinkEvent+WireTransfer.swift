import RelinkModel

// Transfers (`transfer-progress`, `transfer-completed`, `transfer-failed`),
// format 2 (added within it): beside `peripheral`, `transfer` (the
// transfer's lowercase UUID), `characteristic` (`{"service",
// "characteristic"}`), `offset` (bytes the peripheral confirmed) and
// `length` (the transfer's bytes), numbers; `transfer-failed` adds
// `reason`, a failure (`{"errorName", "failureClass", "message"}`).
extension RelinkEvent.Wire {
    typealias Key = RelinkEvent.Key

    static func encodeTransfer(_ event: TransferEvent, in body: inout KeyedEncodingContainer<Key>) throws {
        let status = event.status
        try body.encode(status.transfer.description, forKey: .transfer)
        try encodeCharacteristic(status.characteristic, in: &body)
        try body.encode(status.offset, forKey: .offset)
        try body.encode(status.length, forKey: .length)
        if case .failed(_, let reason) = event { try encodeFailure(reason, in: &body) }
    }

    static func decodeTransfer(_ kind: EventKind, _ body: KeyedDecodingContainer<Key>, peripheral: PeripheralID) throws -> TransferEvent {
        let text = try body.decode(String.self, forKey: .transfer)
        let id: TransferID
        do { id = try TransferID(parsing: text) } catch {
            throw DecodingError.dataCorruptedError(forKey: .transfer, in: body, debugDescription: "\(error)")
        }
        let status = TransferStatus(transfer: id, peripheral: peripheral, characteristic: try decodeCharacteristic(body),
                                    offset: try body.decode(Int.self, forKey: .offset), length: try body.decode(Int.self, forKey: .length))
        switch kind {
        case .transferProgress: return .progress(status)
        case .transferCompleted: return .completed(status)
        default: return .failed(status, reason: try decodeFailure(body))
        }
    }
}
