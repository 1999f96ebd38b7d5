/// Errors of the bench test support.
public enum BenchError: Error, Equatable, CustomStringConvertible {
    /// `bench/run-bench` (or `$RELINK_BENCH_LAUNCHER`) is not there or not executable.
    case launcherNotFound(String)
    /// The launcher reported an error or exited before its ready line.
    case startFailed(String)
    /// No ready line, or no reply to a command, within the time allowed.
    case timedOut(String)
    /// The bench answered `ok: false` to a command.
    case commandFailed(command: String, message: String)
    /// The bench has stopped (or its stdout closed).
    case notRunning
    /// A line from the bench could not be understood.
    case badReply(String)

    public var description: String {
        switch self {
        case .launcherNotFound(let p): "bench launcher not found at \(p) (run scripts/setup.sh)"
        case .startFailed(let m): "bench failed to start: \(m)"
        case .timedOut(let m): "bench timed out: \(m)"
        case .commandFailed(let c, let m): "bench command \(c) failed: \(m)"
        case .notRunning: "bench is not running"
        case .badReply(let l): "bench sent an unreadable line: \(l)"
        }
    }
}
