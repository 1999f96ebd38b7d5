import Foundation
import GRDB
import RelinkModel

// Durable transfers (migration v7): each row with its bytes, and the
// mutations that keep them.
extension StateLoader {
    /// Every stored transfer, oldest first, and the rows that could not be read.
    func transfers() throws -> ([TransferRecord], [UnreadableRow]) {
        var unreadable: [UnreadableRow] = []
        var transfers: [TransferRecord] = []
        try rows("""
            SELECT t.id, t.identifier, t.peripheral_id, t.service_uuid, t.characteristic_uuid, t.length, t.confirmed,
                t.with_response, t.resume, t.chunk_size, t.created_at, d.data
            FROM transfer t LEFT JOIN transfer_data d ON d.transfer_id = t.id ORDER BY t.created_at, t.id
            """, table: "transfer", into: &unreadable) { c, cache in
            let data: [UInt8]? = c.withBlob(11) { Array($0.bindMemory(to: UInt8.self)) }
            guard let data, data.count == Int(try c.int64(5)) else { throw StoreError.corruptRow("transfer_data.data: missing or not `length` bytes") }
            do {
                transfers.append(try TransferRecord(
                    id: TransferID(try c.uuid(0, "transfer.id")), identifier: cache.identifier(c, 1),
                    peripheral: PeripheralID(try c.uuid(2, "transfer.peripheral_id")),
                    characteristic: CharacteristicKey(service: try c.bluetoothUUID(3, "transfer.service_uuid"),
                                                      characteristic: try c.bluetoothUUID(4, "transfer.characteristic_uuid")),
                    data: data, confirmed: Int(try c.int64(6)), withResponse: try c.bool(7), resume: try c.bool(8),
                    chunkSize: try c.optionalInt64(9).map { Int($0) }, createdAt: Date(storedMilliseconds: try c.int64(10))))
            } catch let error as DomainError {
                throw StoreError.corruptRow("transfer: \(error)")
            }
        }
        return (transfers, unreadable)
    }
}

extension MutationApplier {
    /// Stores a new transfer with its bytes (its identifier and peripheral must exist).
    func putTransfer(_ t: TransferRecord) throws {
        try db.cachedStatement(sql: """
            INSERT INTO transfer (id, identifier, peripheral_id, service_uuid, characteristic_uuid, length, confirmed,
                with_response, resume, chunk_size, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [t.id.uuid.storedBlob, t.identifier.rawValue, t.peripheral.storedBlob, t.characteristic.service.storedBlob,
                                     t.characteristic.characteristic.storedBlob, t.length, t.confirmed, t.withResponse, t.resume,
                                     t.chunkSize, t.createdAt.storedMilliseconds])
        try db.cachedStatement(sql: "INSERT INTO transfer_data (transfer_id, data) VALUES (?, ?)")
            .execute(arguments: [t.id.uuid.storedBlob, Data(t.data)])
    }

    /// Moves a transfer's confirmed offset (nothing for a transfer that is gone).
    func setTransferOffset(_ id: TransferID, _ confirmed: Int) throws {
        try db.cachedStatement(sql: "UPDATE transfer SET confirmed = ? WHERE id = ?").execute(arguments: [confirmed, id.uuid.storedBlob])
    }

    /// Forgets a transfer with its bytes (nothing when it is gone).
    func removeTransfer(_ id: TransferID) throws {
        try db.cachedStatement(sql: "DELETE FROM transfer WHERE id = ?").execute(arguments: [id.uuid.storedBlob])
    }
}
