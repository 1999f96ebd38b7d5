import Glibc

/// Where ``JournalLogHandler`` writes: the `--log-target` setting.
public enum LogDestination: String, CaseIterable, Sendable {
    /// journald when relinkd appears to run under it, readable stderr otherwise
    /// (see ``resolve(environment:journalSocketExists:stderrIsTerminal:)``).
    case auto
    /// Always journald. Entries journald refuses go to stderr; when journald's
    /// socket does not exist at all, libsystemd drops entries silently.
    case journal
    /// Always one readable line per entry on stderr.
    case stderr

    /// The path of journald's native socket.
    public static let journalSocketPath = "/run/systemd/journal/socket"

    /// Decides ``auto`` from facts about the process:
    /// * `$JOURNAL_STREAM` set (systemd connected stdout/stderr to journald) → journal;
    /// * stderr is a terminal (someone runs relinkd by hand) → stderr, so they see the log;
    /// * journald's socket exists → journal;
    /// * otherwise → stderr.
    ///
    /// ``journal`` and ``stderr`` resolve to themselves.
    public func resolve(
        environment: [String: String], journalSocketExists: Bool, stderrIsTerminal: Bool
    ) -> LogDestination {
        switch self {
        case .journal, .stderr: return self
        case .auto:
            if let stream = environment["JOURNAL_STREAM"], !stream.isEmpty { return .journal }
            if stderrIsTerminal { return .stderr }
            return journalSocketExists ? .journal : .stderr
        }
    }

    /// Resolves ``auto`` against this process's environment, stderr and file system.
    public func resolveForCurrentProcess() -> LogDestination {
        var environment: [String: String] = [:]
        if let stream = getenv("JOURNAL_STREAM") { environment["JOURNAL_STREAM"] = String(cString: stream) }
        var status = stat()
        let socketExists = stat(Self.journalSocketPath, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
        return resolve(
            environment: environment, journalSocketExists: socketExists,
            stderrIsTerminal: isatty(STDERR_FILENO) == 1)
    }
}
