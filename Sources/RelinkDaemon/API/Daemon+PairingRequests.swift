import BlueZ
import DBus
import Logging
import RelinkAPI
import RelinkModel
import Restoration

// Passkey and confirmation requests of relinkd's agent, forwarded to the
// identifier's client (docs/api/Central1.md, "Pairing requests"; issue 24,
// pair3). A pairing relinkd starts with a capability other than
// `NoInputNoOutput` (`PairWith`) registers relinkd's one agent with that
// capability for the pairing's duration (``PairingRequestBroker``); each
// request bluetoothd makes of the agent becomes a `pairing-request` event
// with a request number, answered by `AnswerPairing`, or refused at once
// when no client is attached, or canceled after ``pairingAnswerBound``.
extension Daemon {
    /// How long a pairing request waits for the client's answer before the
    /// agent answers `org.bluez.Error.Canceled` (inside `Device1.Pair`'s
    /// own 30 s bound, so that the call fails as a timeout of the answer).
    static let pairingAnswerBound: Duration = .seconds(20)

    /// bluetoothd asks relinkd's agent something about `device`.
    nonisolated func agentRequest(_ device: ObjectPath, _ request: AgentRequest) async -> AgentAnswer {
        let broker = env.pairingRequests, clock = env.clock
        // Just Works (Pair, pairing on demand) forwards nothing: every request is refused.
        guard let target = await broker.target(of: device), target.capability != .noInputNoOutput else { return .reject }
        let number = await broker.open(target.id, device, request)
        let delivered: Bool = await withCheckedContinuation { reply in
            if case .terminated = inputContinuation.yield(.pairingRequest(target.id, target.peripheral, number, request, reply)) {
                reply.resume(returning: false)
            }
        }
        guard delivered else {
            await broker.close(number)
            return .reject
        }
        return await broker.wait(number, until: clock.now + Self.pairingAnswerBound, clock: clock)
    }

    /// The loop's part of a request: the event to the identifier's
    /// attached client; false (refused at once) when none is attached.
    func pairingRequestForwarded(_ id: RestoreIdentifier, _ peripheral: PeripheralID, _ number: UInt64, _ request: AgentRequest) -> Bool {
        var fields = deviceFields(peripheral)
        fields[JournalField.restoreID.rawValue] = "\(id)"
        fields[JournalField.request.rawValue] = "\(number)"
        fields[JournalField.event.rawValue] = "pairing-request"
        guard clientAttached(id) else {
            logger.notice("pairing request (\(request.kind)) refused: no client attached", metadata: fields)
            return false
        }
        do {
            try emitGathered(.pairingRequest(peripheral: peripheral, request: number, kind: request.kind, passkey: request.shownPasskey), to: [id])
        } catch {
            logger.error("pairing-request event not stored: \(error)", metadata: fields)
            return false
        }
        logger.info("pairing request (\(request.kind)) forwarded to the client", metadata: fields)
        return true
    }

    /// `AnswerPairing`: the identifier's answer to one of its requests.
    /// - Throws: `UnknownRequest` (no such request of this identifier
    ///   waiting: never handed out, answered, or timed out).
    func answerPairing(_ id: RestoreIdentifier, _ number: UInt64, accept: Bool, passkey: UInt32) async throws(RelinkError) -> APIResult {
        guard await env.pairingRequests.answer(number, by: id, accept: accept, passkey: passkey) else {
            throw RelinkError(.unknownRequest, "\(id) has no pairing request \(number) waiting for an answer (never handed out, answered already, or canceled after \(Self.pairingAnswerBound))")
        }
        return APIResult(values: [])
    }
}

/// The agent's registered capability and the requests waiting for a
/// client's answer. bluetoothd keeps one agent per D-Bus connection, with one
/// capability: a pairing that needs another capability waits until no
/// pairing uses the registered one, then registers it again
/// (``begin(_:_:capability:)``); pairings with the same capability run together.
actor PairingRequestBroker {
    /// Whose pairing of a device it is.
    struct Target: Sendable {
        var id: RestoreIdentifier
        var peripheral: PeripheralID
        var capability: AgentCapability
    }
    private var targets: [ObjectPath: Target] = [:]
    private var opened: [UInt64: (id: RestoreIdentifier, device: ObjectPath, request: AgentRequest)] = [:]
    private var waiting: [UInt64: CheckedContinuation<AgentAnswer, Never>] = [:]
    private var early: [UInt64: AgentAnswer] = [:]
    private var timedOut: Set<ObjectPath> = []
    /// Request numbers start at a random point: a `pairing-request` event
    /// of a relinkd that was restarted (still in the outbox, replayed) must
    /// not name a request of this one.
    private var next = UInt64.random(in: 1...(1 << 48))
    private var registered: AgentCapability?
    private var inUse = 0
    private var turn: [CheckedContinuation<Void, Never>] = []

    /// A pairing of `device` starts; returns whether the agent must be
    /// registered again (another capability was registered).
    func begin(_ device: ObjectPath, _ target: Target, capability: AgentCapability) async -> Bool {
        while inUse > 0 && registered != capability { await withCheckedContinuation { turn.append($0) } }
        let replacing = registered != nil && registered != capability
        registered = capability
        inUse += 1
        targets[device] = target
        timedOut.remove(device)
        return replacing
    }

    /// The pairing of `device` ended; returns whether a request of it was
    /// left unanswered until its bound.
    func end(_ device: ObjectPath) -> Bool {
        inUse -= 1
        targets[device] = nil
        let waiters = turn
        turn = []
        for w in waiters { w.resume() }
        return timedOut.remove(device) != nil
    }

    /// Whose pairing of `device` is under way.
    func target(of device: ObjectPath) -> Target? { targets[device] }

    /// A new request number.
    func open(_ id: RestoreIdentifier, _ device: ObjectPath, _ request: AgentRequest) -> UInt64 {
        next += 1
        opened[next] = (id, device, request)
        return next
    }

    /// A request that was not handed out.
    func close(_ number: UInt64) { opened[number] = nil }

    /// Waits for the answer to `number`, or cancels it at `deadline`.
    func wait(_ number: UInt64, until deadline: ContinuousClock.Instant, clock: DaemonClock) async -> AgentAnswer {
        if let answer = early.removeValue(forKey: number) { return answer }
        Task {
            try? await clock.sleep(until: deadline)
            self.expire(number)
        }
        return await withCheckedContinuation { waiting[number] = $0 }
    }

    /// The client's answer (`passkey`: the one typed, for a passkey or
    /// PIN request); false when `id` has no such request open.
    func answer(_ number: UInt64, by id: RestoreIdentifier, accept: Bool, passkey: UInt32) -> Bool {
        guard let request = opened[number], request.id == id else { return false }
        opened[number] = nil
        let answer: AgentAnswer = switch (accept, request.request) {
        case (false, _): .reject
        case (true, .passkey): .passkey(passkey)
        case (true, .pinCode): .pinCode(String(passkey))
        case (true, _): .accept
        }
        if let reply = waiting.removeValue(forKey: number) { reply.resume(returning: answer) } else { early[number] = answer }
        return true
    }

    private func expire(_ number: UInt64) {
        guard let request = opened.removeValue(forKey: number), let reply = waiting.removeValue(forKey: number) else { return }
        timedOut.insert(request.device)
        reply.resume(returning: .cancel)
    }
}
