/// A stored row the loader could not decode (a value the schema's CHECKs
/// should have prevented: the file was changed outside relink, or by a
/// bug). It is not loaded, and it is not deleted: it stays in the file,
/// kept aside, until what it belongs to is written again or forgotten;
/// relinkd journals it with its identifier and shows it in `Status`.
public struct UnreadableRow: Hashable, Sendable, Codable {
    /// The table it is in.
    public var table: String
    /// The text of its identifier column, when it has one (may itself be what is wrong).
    public var identifier: String?
    /// What could not be decoded.
    public var reason: String

    /// A row kept aside.
    public init(table: String, identifier: String?, reason: String) {
        self.table = table
        self.identifier = identifier
        self.reason = reason
    }
}
