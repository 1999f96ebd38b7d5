import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The loop runs tasks on its I/O thread, between polls: as a task
/// executor (``Connection/executor``) and as the serial executor of actors
/// that choose it (``Connection/serialExecutor``). One thread runs one job
/// at a time, so it is a serial executor, and an actor on it can be
/// entered synchronously from the loop itself (``Connection/signals(matching:inline:)``).
///
/// Once the connection is closed, jobs go to one private serial queue, so
/// no task is stranded and actors on this executor still run one job at a
/// time.
extension ConnectionLoop: TaskExecutor, SerialExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let (wake, closed) = state.withLock { s -> (Bool, Bool) in
            if s.closedError != nil { return (false, true) }
            s.jobs.append(unowned)
            return (s.needsWake(), false)
        }
        if closed {
            runAfterClose(unowned)
        } else if wake {
            wakeUp()
        }
    }

    /// Runs a job with this loop as its serial and its task executor.
    func runJob(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }

    func runAfterClose(_ job: UnownedJob) {
        afterClose.async { self.runJob(job) }
    }

    /// Whether the caller runs where this executor's jobs run: the I/O
    /// thread, or the private queue after the connection closed.
    var isCurrent: Bool {
        if state.withLock({ s in s.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }) { return true }
        return DispatchQueue.getSpecific(key: Self.afterCloseKey) == ObjectIdentifier(self).hashValue
    }

    func isIsolatingCurrentContext() -> Bool? { isCurrent }

    func checkIsolated() {
        precondition(isCurrent, "not on the D-Bus connection's I/O thread")
    }

    static let afterCloseKey = DispatchSpecificKey<Int>()
}
