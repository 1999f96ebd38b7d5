import Logging

/// One journal entry as `NAME=value` fields, built from a swift-log event.
struct JournalEntry: Equatable, Sendable {
    struct Field: Equatable, Sendable {
        var name: String
        var value: String
    }

    /// Fields the handler sets itself; metadata keys that sanitise to one of
    /// these are renamed `META_<NAME>` rather than overriding or doubling them.
    static let ownedFields: Set<String> = [
        "MESSAGE", "PRIORITY", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
        "SYSLOG_IDENTIFIER", "SWIFT_LOG_LABEL", "SWIFT_LOG_SOURCE",
    ]

    var fields: [Field]

    init(
        event: LogEvent, metadata: Logger.Metadata, identifier: String, label: String
    ) {
        fields = [
            Field(name: "MESSAGE", value: event.message.description),
            Field(name: "PRIORITY", value: String(SyslogPriority(event.level).rawValue)),
            Field(name: "CODE_FILE", value: event.file),
            Field(name: "CODE_LINE", value: String(event.line)),
            Field(name: "CODE_FUNC", value: event.function),
            Field(name: "SYSLOG_IDENTIFIER", value: identifier),
            Field(name: "SWIFT_LOG_LABEL", value: label),
            Field(name: "SWIFT_LOG_SOURCE", value: event.source),
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            Self.append(key: key, value: value, to: &fields)
        }
        if let error = event.error, metadata[RelinkField.error] == nil {
            fields.append(Field(name: RelinkField.error, value: "\(error)"))
        }
    }

    /// The first value of a field, for tests and the stderr fallback.
    subscript(name: String) -> String? {
        fields.first(where: { $0.name == name })?.value
    }

    /// Flattens a metadata value: dictionaries become `KEY_SUBKEY` fields,
    /// everything else its description.
    private static func append(key: String, value: Logger.MetadataValue, to fields: inout [Field]) {
        switch value {
        case .dictionary(let dictionary) where !dictionary.isEmpty:
            for (subkey, subvalue) in dictionary.sorted(by: { $0.key < $1.key }) {
                append(key: key + "_" + subkey, value: subvalue, to: &fields)
            }
        default:
            var name = JournalFieldName.sanitise(key)
            if ownedFields.contains(name) { name = String(("META_" + name).prefix(JournalFieldName.maximumLength)) }
            fields.append(Field(name: name, value: value.description))
        }
    }
}
