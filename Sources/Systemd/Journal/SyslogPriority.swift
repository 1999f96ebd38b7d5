import Logging

/// syslog(3) priorities as journald's `PRIORITY` field carries them.
enum SyslogPriority: Int, Sendable {
    case emergency = 0, alert, critical, error, warning, notice, info, debug

    /// swift-log's levels on syslog's: trace and debug are both `debug` (7).
    init(_ level: Logger.Level) {
        switch level {
        case .trace, .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
