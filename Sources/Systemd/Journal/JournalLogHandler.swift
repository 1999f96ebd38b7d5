public import Logging

/// A swift-log handler that writes to journald natively (`sd_journal_sendv`),
/// with `PRIORITY`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, `SYSLOG_IDENTIFIER`
/// and every metadata key as a journal field (relink's field names are
/// `RelinkModel.JournalField`; see also ``RelinkMessageID``). Falls back to
/// one readable line per entry on stderr when not under journald.
///
/// ```swift
/// LoggingSystem.bootstrap { label in
///     JournalLogHandler(label: label, identifier: "relinkd", destination: .auto, logLevel: .info)
/// }
/// ```
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    public let label: String
    /// `SYSLOG_IDENTIFIER`, and the name in stderr lines.
    public let identifier: String
    /// Where entries go, with ``LogDestination/auto`` already resolved.
    public let destination: LogDestination
    /// What an entry is about, from its text and metadata, appended to its
    /// text as `text (subject)`: the fields stay as they are, and a reader
    /// of plain `journalctl` output sees which device a line is about.
    public typealias Subject = @Sendable (_ message: String, _ metadata: Logger.Metadata) -> String?
    /// Names each entry's subject in its text; nil leaves texts as they are.
    public let subject: Subject?

    /// - Parameters:
    ///   - identifier: `SYSLOG_IDENTIFIER`; the program's name when `nil`.
    ///   - destination: ``LogDestination/auto`` is resolved once, here.
    public init(
        label: String,
        identifier: String? = nil,
        destination: LogDestination = .auto,
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil,
        subject: Subject? = nil
    ) {
        self.subject = subject
        self.label = label
        self.identifier = identifier ?? Self.programName()
        self.destination = destination.resolveForCurrentProcess()
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        var event = event
        if let subject, let text = subject(event.message.description, merged) {
            event.message = "\(event.message.description) (\(text))"
        }
        if destination == .journal {
            let entry = JournalEntry(event: event, metadata: merged, identifier: identifier, label: label)
            do {
                try JournalWriter.send(entry)
                return
            } catch {
                merged["journal-error"] = "\(error)"
            }
        }
        if let error = event.error, merged[RelinkField.error] == nil { merged[RelinkField.error] = "\(error)" }
        StderrLine.write(
            StderrLine.format(
                level: event.level, message: event.message.description, metadata: merged,
                identifier: identifier, timestamp: StderrLine.now()))
    }

    private static func programName() -> String {
        guard let path = CommandLine.arguments.first, let name = path.split(separator: "/").last else {
            return "relinkd"
        }
        return String(name)
    }
}
