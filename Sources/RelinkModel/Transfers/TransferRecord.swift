#if canImport(FoundationEssentials)
public import struct FoundationEssentials.UUID
public import struct FoundationEssentials.Date
#else
public import struct Foundation.UUID
public import struct Foundation.Date
#endif

/// A durable transfer's identifier (`Central1.StartTransfer`'s reply, the
/// `transfer` field of its events): a random UUID, lowercase in text.
public struct TransferID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The UUID.
    public let uuid: UUID

    /// A fresh random identifier.
    public init() { uuid = UUID() }

    /// The identifier of a UUID.
    public init(_ uuid: UUID) { self.uuid = uuid }

    /// Parses the textual form of a UUID (either case).
    /// - Throws: ``DomainError/invalidTransferID(_:)`` when `string` is not a UUID.
    public init(parsing string: String) throws(DomainError) {
        guard let uuid = UUID(uuidString: string) else { throw .invalidTransferID(string) }
        self.uuid = uuid
    }

    /// The lowercase UUID.
    public var description: String { uuid.uuidString.lowercased() }

    /// Text order.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }
}

/// A transfer (an OTA firmware image, a file) relinkd writes to one
/// characteristic in chunks, each sent when the previous one is confirmed,
/// and keeps in the store with the offset the peripheral confirmed, so that
/// it outlives its client and, when asked (`resume`), a relinkd restart or
/// a link drop.
public struct TransferRecord: Sendable, Hashable, Codable {
    /// The largest transfer relinkd takes, in bytes (16 MiB, from a file;
    /// the bytes are kept in the store until the transfer ends).
    public static let maximumLength = 16 << 20
    /// The largest transfer whose bytes travel in the call itself
    /// (`StartTransfer`'s `ay`, 1 MiB); a larger one comes as a file
    /// (`StartTransferFromFile`).
    public static let maximumInlineLength = 1 << 20

    /// Its identifier.
    public let id: TransferID
    /// The restore identifier that started it (its events go there).
    public let identifier: RestoreIdentifier
    /// The peripheral written to.
    public let peripheral: PeripheralID
    /// The characteristic written to.
    public let characteristic: CharacteristicKey
    /// The bytes, 1 to ``maximumLength``.
    public let data: [UInt8]
    /// Bytes from the start the peripheral confirmed (as last stored).
    public var confirmed: Int
    /// Write requests (each chunk answered by the peripheral) rather than write commands.
    public let withResponse: Bool
    /// Whether a relinkd restart or a link drop resumes it (else it fails).
    public let resume: Bool
    /// The largest chunk the client asked for; nil: the link's largest
    /// single-packet value (ATT MTU − 3).
    public let chunkSize: Int?
    /// When it was started.
    public let createdAt: Date

    /// A transfer.
    /// - Throws: ``DomainError/invalidTransfer(_:)`` for no bytes, more
    ///   than ``maximumLength``, a confirmed offset outside the bytes, or a
    ///   chunk size outside 1...512.
    public init(id: TransferID = TransferID(), identifier: RestoreIdentifier, peripheral: PeripheralID, characteristic: CharacteristicKey,
                data: [UInt8], confirmed: Int = 0, withResponse: Bool, resume: Bool, chunkSize: Int? = nil,
                createdAt: Date = Date()) throws(DomainError) {
        guard !data.isEmpty else { throw .invalidTransfer("no bytes to transfer") }
        guard data.count <= Self.maximumLength else {
            throw .invalidTransfer("\(data.count) bytes: a transfer takes at most \(Self.maximumLength) bytes")
        }
        guard (0...data.count).contains(confirmed) else { throw .invalidTransfer("confirmed offset \(confirmed) outside 0...\(data.count)") }
        if let chunkSize, !(1...WriteLimits.maximumAttributeLength).contains(chunkSize) {
            throw .invalidTransfer("chunk size \(chunkSize) outside 1...\(WriteLimits.maximumAttributeLength)")
        }
        self.id = id
        self.identifier = identifier
        self.peripheral = peripheral
        self.characteristic = characteristic
        self.data = data
        self.confirmed = confirmed
        self.withResponse = withResponse
        self.resume = resume
        self.chunkSize = chunkSize
        self.createdAt = createdAt
    }

    /// The bytes' length.
    public var length: Int { data.count }

    /// The next chunk on a link with these limits: from ``confirmed``, at
    /// most the chunk size asked for and the link's largest single-packet
    /// value (a write with response may be a long write only when the
    /// client asked for chunks that large); empty when done.
    public func nextChunk(_ limits: WriteLimits) -> ArraySlice<UInt8> {
        let largest = chunkSize.map { withResponse ? min($0, limits.withResponse) : min($0, limits.withoutResponse) } ?? limits.withoutResponse
        let end = min(data.count, confirmed + max(1, largest))
        return data[confirmed..<end]
    }

    /// Where it stands, for its events.
    public var status: TransferStatus {
        TransferStatus(transfer: id, peripheral: peripheral, characteristic: characteristic, offset: confirmed, length: data.count)
    }
}

/// Where a transfer stands: what its events carry.
public struct TransferStatus: Sendable, Hashable, Codable {
    /// The transfer.
    public var transfer: TransferID
    /// The peripheral written to.
    public var peripheral: PeripheralID
    /// The characteristic written to.
    public var characteristic: CharacteristicKey
    /// Bytes from the start the peripheral confirmed.
    public var offset: Int
    /// The transfer's length in bytes.
    public var length: Int

    /// A status.
    public init(transfer: TransferID, peripheral: PeripheralID, characteristic: CharacteristicKey, offset: Int, length: Int) {
        self.transfer = transfer
        self.peripheral = peripheral
        self.characteristic = characteristic
        self.offset = offset
        self.length = length
    }
}

/// An event of a transfer, told to the identifier that started it.
public enum TransferEvent: Sendable, Hashable, Codable {
    /// Chunks were confirmed (at most one such event per
    /// progress interval; none for the last chunk: `completed` follows).
    case progress(TransferStatus)
    /// Every byte was confirmed; the transfer is gone from the store.
    case completed(TransferStatus)
    /// It ended before the end (`offset` is what the peripheral confirmed);
    /// the transfer is gone from the store.
    case failed(TransferStatus, reason: ConnectionFailure)

    /// Its status.
    public var status: TransferStatus {
        switch self {
        case .progress(let s), .completed(let s), .failed(let s, _): s
        }
    }

    /// The event's kind.
    public var kind: EventKind {
        switch self {
        case .progress: .transferProgress
        case .completed: .transferCompleted
        case .failed: .transferFailed
        }
    }

    /// The kind's wire name (``EventKind``).
    public var name: String { kind.rawValue }
}
