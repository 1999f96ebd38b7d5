public import RelinkModel
/// Errors of store requests (after a successful open). Nothing of a failed
/// request is written: every request is one transaction.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An argument broke a documented rule (length, characters, range).
    case invalidArgument(String)
    /// The restore identifier does not exist.
    case unknownIdentifier(RestoreIdentifier)
    /// The peripheral does not exist.
    case unknownPeripheral(String)
    /// Another peripheral already has this adapter/address/address type.
    case addressInUse(DeviceAddress)
    /// `acknowledgeEvents(through:)` named a negative sequence number.
    case invalidAcknowledgement(RestoreIdentifier, through: Int64, nextSequence: Int64)
    /// The disk (or the database's size limit) is full; the request was rolled back.
    case diskFull
    /// The database or its directory is read-only; the request was rolled back.
    case readOnly
    /// The database was found corrupt while in use.
    case corrupt(String)
    /// Any other I/O or SQLite failure (message from SQLite).
    case io(String)
    /// A stored row could not be decoded (the file was changed outside relink).
    case corruptRow(String)
    /// The store was closed.
    case closed

    /// Whether the storage itself failed (a full disk, a read-only or
    /// damaged file, I/O, a closed store) rather than the request (a bad
    /// argument, an unknown identifier): a later request may fail the same way.
    public var isStorageFailure: Bool {
        switch self {
        case .diskFull, .readOnly, .corrupt, .io, .closed: true
        case .invalidArgument, .unknownIdentifier, .unknownPeripheral, .addressInUse, .invalidAcknowledgement, .corruptRow: false
        }
    }

    public var description: String {
        switch self {
        case .invalidArgument(let why): "invalid argument: \(why)"
        case .unknownIdentifier(let id): "unknown restore identifier \(id)"
        case .unknownPeripheral(let id): "unknown peripheral \(id)"
        case .addressInUse(let address): "another peripheral already has address \(address)"
        case .invalidAcknowledgement(let id, let through, let next):
            "acknowledgement through \(through) for \(id), but the next sequence number is \(next)"
        case .diskFull: "disk full: the request was not stored"
        case .readOnly: "state directory or database is read-only: the request was not stored"
        case .corrupt(let why): "database corrupt: \(why)"
        case .io(let why): "I/O error: \(why)"
        case .corruptRow(let why): "stored row unreadable: \(why)"
        case .closed: "store closed"
        }
    }
}
