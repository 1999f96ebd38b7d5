/// The loop can run tasks on its I/O thread, between polls (see
/// ``Connection/executor``). Once the connection is closed, jobs go to the
/// global concurrent executor, so no task is stranded.
extension ConnectionLoop: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let (wake, closed) = state.withLock { s -> (Bool, Bool) in
            if s.closedError != nil { return (false, true) }
            s.jobs.append(unowned)
            return (s.needsWake(), false)
        }
        if closed {
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
        } else if wake {
            wakeUp()
        }
    }
}
