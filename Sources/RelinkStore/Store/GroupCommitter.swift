import GRDB
import Synchronization

/// Group commit: requests that arrive while a transaction is being written
/// are applied together in the next transaction, each in its own savepoint,
/// and all of them are answered after that transaction's commit (and fsync)
/// has returned. One fsync then acknowledges many requests, and no request
/// is answered before its own commit.
///
/// No tasks are started: each flush is one block on GRDB's serial writer
/// queue (`asyncWriteWithoutTransaction`), which picks up every request
/// queued by the time it runs.
final class GroupCommitter: Sendable {
    /// Called once per request, on the writer queue, in submission order.
    typealias Completion = @Sendable (Result<StoreCommit, StoreError>) -> Void

    private struct Pending {
        var mutations: [StoreMutation]
        var completion: Completion
    }

    private struct State {
        var queue: [Pending] = []
        var flushScheduled = false
        var closed = false
    }

    private let pool: DatabasePool
    private let state = Mutex(State())

    init(pool: DatabasePool) { self.pool = pool }

    /// Applies `mutations` in a transaction shared with concurrent requests;
    /// returns after the commit.
    /// - Throws: `StoreError` (request-scoped errors leave other requests unaffected).
    func submit(_ mutations: [StoreMutation]) async throws(StoreError) -> StoreCommit {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<StoreCommit, StoreError>, Never>) in
            submit(mutations) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Queues `mutations` for the next transaction without waiting:
    /// `completion` gets the outcome after the commit. Requests submitted
    /// one after another are applied, and completed, in that order
    /// (a refusal because the store is closed completes at once).
    func submit(_ mutations: [StoreMutation], completion: @escaping Completion) {
        let action: Action = state.withLock { state in
            if state.closed { return .refuse }
            state.queue.append(Pending(mutations: mutations, completion: completion))
            if state.flushScheduled { return .none }
            state.flushScheduled = true
            return .schedule
        }
        switch action {
        case .refuse: completion(.failure(.closed))
        case .schedule: pool.asyncWriteWithoutTransaction { [self] db in flush(db) }
        case .none: break
        }
    }

    /// Stops accepting requests (those already queued are still written).
    func close() { state.withLock { $0.closed = true } }

    private enum Action { case refuse, schedule, none }

    /// Runs on the writer queue: one transaction for every queued request.
    private func flush(_ db: Database) {
        let batch = state.withLock { state in
            state.flushScheduled = false
            defer { state.queue.removeAll(keepingCapacity: true) }
            return state.queue
        }
        guard !batch.isEmpty else { return }
        var results: [Result<StoreCommit, StoreError>] = []
        results.reserveCapacity(batch.count)
        do {
            try db.inTransaction(.immediate) {
                results.removeAll(keepingCapacity: true)
                for request in batch {
                    results.append(try Self.applyInSavepoint(request.mutations, db))
                }
                return .commit
            }
        } catch {
            let failure = StoreError.from(error)
            for request in batch { request.completion(.failure(failure)) }
            return
        }
        for (request, result) in zip(batch, results) {
            request.completion(result)
        }
    }

    /// Applies one request in a savepoint; a request-scoped error rolls back
    /// this request only, any other error is rethrown to fail the transaction.
    private static func applyInSavepoint(_ mutations: [StoreMutation], _ db: Database) throws -> Result<StoreCommit, StoreError> {
        var outcome: Result<StoreCommit, StoreError> = .failure(.closed)
        try db.inSavepoint {
            do {
                outcome = .success(try MutationApplier(db: db).apply(mutations))
                return .commit
            } catch {
                let mapped = StoreError.from(error)
                guard mapped.isRequestScoped else { throw error }
                outcome = .failure(mapped)
                return .rollback
            }
        }
        return outcome
    }
}
