import Foundation

/// The bench's stdout, in order: the ready line, then replies matched to
/// requests by id. Fed by one reader task; times out what gets no answer.
actor BenchChannel {
    private var ready: CheckedContinuation<BenchInfo, any Error>?
    private var readyResult: Result<BenchInfo, any Error>?
    private var pending: [Int: (command: String, continuation: CheckedContinuation<BenchReply, any Error>)] = [:]
    private var nextID = 0
    private var isClosed = false

    /// Handles one line from the bench's stdout.
    func deliver(_ line: String) {
        guard let data = line.data(using: .utf8),
              let object = try? JSONDecoder().decode([String: JSONValue].self, from: data)
        else { return }   // not ours (the bench writes only JSON lines on stdout)
        if let event = object["event"]?.stringValue {
            switch event {
            case "ready":
                do {
                    resolveReady(.success(try JSONDecoder().decode(BenchInfo.self, from: data)))
                } catch {
                    resolveReady(.failure(BenchError.badReply(line)))
                }
            case "error":
                resolveReady(.failure(BenchError.startFailed(object["error"]?.description ?? line)))
            default:
                break
            }
            return
        }
        guard let id = object["id"]?.intValue, let entry = pending.removeValue(forKey: id) else { return }
        if object["ok"]?.boolValue == true {
            var fields = object
            fields["id"] = nil
            fields["ok"] = nil
            entry.continuation.resume(returning: BenchReply(fields: fields))
        } else {
            entry.continuation.resume(throwing: BenchError.commandFailed(
                command: entry.command, message: object["error"]?.description ?? "no reason given"))
        }
    }

    /// stdout closed: nothing more will come.
    func closed() {
        isClosed = true
        resolveReady(.failure(BenchError.startFailed("the launcher exited before it was ready")))
        for (_, entry) in pending { entry.continuation.resume(throwing: BenchError.notRunning) }
        pending.removeAll()
    }

    private func resolveReady(_ result: Result<BenchInfo, any Error>) {
        guard readyResult == nil else { return }
        readyResult = result
        ready?.resume(with: result)
        ready = nil
    }

    /// Waits for the ready line. Throws `BenchError.startFailed` or `.timedOut`.
    func waitReady(timeout: Duration) async throws -> BenchInfo {
        if let readyResult { return try readyResult.get() }
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.resolveReady(.failure(BenchError.timedOut("no ready line within \(timeout)")))
        }
        return try await withCheckedThrowingContinuation { ready = $0 }
    }

    /// Allocates an id and registers the wait for its reply; `write` sends the line.
    func request(_ command: BenchCommand, timeout: Duration,
                 write: @Sendable (Data) throws -> Void) async throws -> BenchReply {
        guard !isClosed else { throw BenchError.notRunning }
        nextID += 1
        let id = nextID
        var object = command.arguments
        object["id"] = .number(Double(id))
        object["cmd"] = .string(command.name)
        var line = try JSONEncoder().encode(object)
        line.append(UInt8(ascii: "\n"))
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expire(id)
        }
        return try await withCheckedThrowingContinuation { continuation in
            pending[id] = (command.name, continuation)
            do {
                try write(line)
            } catch {
                pending.removeValue(forKey: id)?.continuation.resume(throwing: BenchError.notRunning)
            }
        }
    }

    private func expire(_ id: Int) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        entry.continuation.resume(throwing: BenchError.timedOut("no reply to \(entry.command)"))
    }
}
