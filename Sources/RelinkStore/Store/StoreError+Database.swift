import GRDB

extension StoreError {
    /// Maps anything thrown by GRDB or the store to a `StoreError`.
    static func from(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? DatabaseError else { return .io(String(describing: error)) }
        let message = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_FULL: return .diskFull
        case .SQLITE_READONLY: return .readOnly
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return .corrupt(message)
        case .SQLITE_CONSTRAINT: return .invalidArgument(message)
        case .SQLITE_IOERR where error.extendedResultCode == .SQLITE_IOERR_WRITE || error.extendedResultCode == .SQLITE_IOERR_FSYNC:
            return .io("\(message) (\(error.extendedResultCode))")
        default: return .io("\(message) (\(error.extendedResultCode))")
        }
    }

    /// Errors that concern one request only (its savepoint is rolled back,
    /// the rest of a group commit goes on); all others fail the whole group.
    var isRequestScoped: Bool {
        switch self {
        case .invalidArgument, .unknownIdentifier, .unknownPeripheral, .addressInUse, .invalidAcknowledgement: true
        case .diskFull, .readOnly, .corrupt, .io, .corruptRow, .closed: false
        }
    }
}

/// Runs `body`, mapping every error to `StoreError`.
func mappingErrors<T>(_ body: () async throws -> T) async throws(StoreError) -> T {
    do { return try await body() } catch { throw StoreError.from(error) }
}
