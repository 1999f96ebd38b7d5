import Restoration

// The machines' timers: one queue in the core (``TimerQueue``), one task
// sleeping until its earliest instant. A task per timer cost 3.4 KB each
// and a task-group slot (docs/startup-profile.md).
extension Daemon {
    /// At most this many timers fire per loop input; the rest fire in the
    /// next one, after the inputs that came meanwhile (10,000 intents whose
    /// timers are due together must not hold a call back for all of them).
    static let timersPerInput = 256

    /// Makes the sleeping task wake at the earliest pending timer: a new one
    /// when none sleeps or the one that sleeps would wake later. One that
    /// would wake earlier is left: it wakes to nothing due, or to what is
    /// due then, and the next arming follows.
    func armTimers() {
        guard let earliest = core.timers.nextInstant() else { return }
        if let armed = loop.timerSleeper, armed.instant <= earliest { return }
        loop.timerSleeper?.task.cancel()
        let clock = self.clock, inbox = inputContinuation
        let task = Task.detached {
            do { try await clock.sleep(until: earliest) } catch { return }
            inbox.yield(.timersDue)
        }
        loop.timerSleeper = TimerSleeper(instant: earliest, task: task)
    }

    /// The sleeping task woke: each timer due now is fired into its machine,
    /// in instant order (equal instants in the order they were scheduled),
    /// each machine's actions and immediate inputs carried out before the
    /// next timer fires, as when each timer was an input of its own.
    func timersDue() async {
        let now = clock.now
        if let armed = loop.timerSleeper, armed.instant <= now { loop.timerSleeper = nil }
        for due in core.timers.takeDue(at: now, limit: Self.timersPerInput) {
            await feed(due.intent, .timerFired(due.token))
            await drainImmediate()
        }
    }

    /// Hands the loop `input` once `delay` has passed on the daemon's clock,
    /// from a task off the loop (nothing when the loop ends first).
    func input(_ input: DaemonInput, after delay: Duration) {
        let clock = self.clock
        loop.spawned.append {
            do { try await clock.sleep(for: delay) } catch { return [] }
            return [input]
        }
    }

    /// Hands the loop `input` at `instant` of the daemon's clock, as ``input(_:after:)``.
    func input(_ input: DaemonInput, at instant: DaemonClock.Instant) {
        let clock = self.clock
        loop.spawned.append {
            do { try await clock.sleep(until: instant) } catch { return [] }
            return [input]
        }
    }

    /// Stops the sleeping task (the loop ended).
    func stopTimers() {
        loop.timerSleeper?.task.cancel()
        loop.timerSleeper = nil
    }
}
