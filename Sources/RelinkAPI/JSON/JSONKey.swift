/// The one casing of every key in the JSON relink writes: `Status`, event
/// payloads, GATT databases, published services, relinkctl's `--json`
/// (docs/api/README.md#json).
///
/// A key is camelCase: a lowercase first word, each later word capitalised,
/// letters and digits only (`adapterState`, `serviceUUIDs`,
/// `lastErrorAtMs`). A time is a Unix time in milliseconds under a key ending
/// in `Ms`. Keys that are data (a UUID in `serviceData`, a company
/// identifier in `manufacturerData`) are not names and follow no casing.
public enum JSONKey {
    /// The keys whose object is keyed by data, not by names: `serviceData`
    /// (by service UUID, in advertisements).
    public static let dataKeyedObjects: Set<String> = ["serviceData"]

    /// Every key in a parsed JSON document (`JSONSerialization`'s objects)
    /// that is not camelCase, as a path (`identifiers[0].last_error`); the
    /// objects under ``dataKeyedObjects`` are data and not looked into.
    /// Empty when the document follows the one casing.
    public static func keysNotCamelCase(in document: Any, at path: String = "") -> [String] {
        if let list = document as? [Any] {
            return list.enumerated().flatMap { keysNotCamelCase(in: $0.element, at: "\(path)[\($0.offset)]") }
        }
        guard let object = document as? [String: Any] else { return [] }
        return object.keys.sorted().flatMap { key -> [String] in
            let here = path.isEmpty ? key : "\(path).\(key)"
            let own = isCamelCase(key) ? [] : [here]
            guard !dataKeyedObjects.contains(key), let value = object[key] else { return own }
            return own + keysNotCamelCase(in: value, at: here)
        }
    }

    /// Whether `key` is camelCase: it starts with a lowercase ASCII letter
    /// and has only ASCII letters and digits.
    public static func isCamelCase(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    /// A D-Bus member name (`ScanServices`, `UUIDs`, `RSSI`, `TxPower`) as
    /// a JSON key: its leading capitals lowercased, the last of them kept
    /// when a lowercase letter follows it (`scanServices`, `uuids`, `rssi`,
    /// `txPower`); `ServiceUUIDs` becomes `serviceUUIDs`.
    public static func fromMemberName(_ name: String) -> String {
        let characters = Array(name)
        var leading = 0
        while leading < characters.count, characters[leading].isUppercase { leading += 1 }
        // "UUIDs": the capitals run to "D", then "s" follows; a run longer
        // than one keeps its last capital for the next word ("ServiceUUIDs":
        // "S" alone), unless the rest is a plural "s" or nothing.
        var lowered = leading
        if leading > 1, leading < characters.count, characters[leading] != "s" { lowered = leading - 1 }
        return String(characters[..<lowered]).lowercased() + String(characters[lowered...])
    }

    /// A name in kebab-case or snake_case (`published-services`,
    /// `bus_name`) as a JSON key (`publishedServices`, `busName`).
    public static func fromWords(_ name: String) -> String {
        let words = name.split(whereSeparator: { $0 == "-" || $0 == "_" })
        return (words.first.map(String.init) ?? "") + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}
