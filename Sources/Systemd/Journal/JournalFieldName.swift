/// Turns a metadata key into a valid journal field name.
///
/// journald accepts names of at most 64 characters from `A-Z`, `0-9` and `_`,
/// not starting with a digit; a leading `_` is reserved for trusted fields set
/// by journald itself. Keys are sanitised, never dropped:
/// `relink.restore-id` → `RELINK_RESTORE_ID`, `_pid` → `PID`,
/// `9lives` → `FIELD_9LIVES`, `__` → `FIELD`.
enum JournalFieldName {
    static let maximumLength = 64

    static func sanitise(_ key: String) -> String {
        var name = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "A"..."Z", "0"..."9", "_": name.unicodeScalars.append(scalar)
            case "a"..."z": name.unicodeScalars.append(Unicode.Scalar(scalar.value - 32) ?? "_")
            default: name.append("_")
            }
        }
        name = String(name.drop(while: { $0 == "_" }))
        if name.isEmpty {
            name = "FIELD"
        } else if let first = name.unicodeScalars.first, ("0"..."9").contains(first) {
            name = "FIELD_" + name
        }
        return String(name.prefix(maximumLength))
    }

    /// Whether `name` is already valid and not reserved.
    static func isValid(_ name: String) -> Bool {
        sanitise(name) == name
    }
}
