import RelinkModel
// Input: a timer the machine asked for fired.
extension ConnectionStateMachine {
    /// A timer fired. Tokens other than the current step/backoff or deadline
    /// token are stale and ignored (logged only).
    ///
    /// * deadline: fail with a timeout unless the link is up;
    /// * step: a lookup or scan that found nothing, or a connect/services
    ///   wait that took too long (the pending Connect is cancelled with
    ///   `disconnect`, except for an adopted link): next step;
    /// * backoff: the next round.
    public mutating func timerFired(_ token: TimerToken) -> [Action] {
        var actions: [Action] = []
        if token == deadlineTimer {
            deadlineTimer = nil
            deadline = nil
            actions.append(log(.stepTimedOut, failure: .deadlineExpired))
            fail(.deadlineExpired, into: &actions)
            return actions
        }
        guard token == phaseTimer else { return [log(.staleTimer(token))] }
        phaseTimer = nil
        switch state {
        case .trying(let strategy):
            let failure: ConnectionFailure = strategy == .scan ? .notFound("no matching advertisement") : .stepTimeout("lookup")
            actions.append(log(.stepTimedOut, failure: failure))
            nextStep(after: failure, into: &actions)
        case .connecting(let address, let route), .waitingForServices(let address, let route):
            let failure = ConnectionFailure.stepTimeout(state == .connecting(address, route) ? "connect" : "services")
            actions.append(log(.stepTimedOut, failure: failure))
            if route != .alreadyConnected { actions.append(.disconnect(address)) }
            nextStep(after: failure, into: &actions)
        case .backingOff:
            beginRound(into: &actions)
        default:
            actions.append(log(.staleTimer(token)))
        }
        return actions
    }
}
