public import DBus
public import RelinkModel

/// An error of relinkd's D-Bus methods (`Manager1`, `Central1`, `Control1`,
/// `PeripheralManager1`, `WriteStream1`), replied as `org.relink.Error.*`
/// (docs/api/errors.md; each method's page lists the ones it can give).
/// relinkd throws it; the client library and relinkctl read its ``code``
/// back from the reply's name.
///
/// The kinds are not listed again here: ``code`` is one of
/// ``RelinkModel/RelinkErrorName/methodErrors``, the one list of names.
public struct RelinkError: Error, Sendable, Hashable, DBusErrorConvertible, CustomStringConvertible {
    /// The kind of the error: its `org.relink.Error.*` name.
    public let code: RelinkErrorName
    /// One human-readable sentence.
    public let message: String

    /// The error of `code` with `message`.
    public init(_ code: RelinkErrorName, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `UnknownIdentifier` for `identifier`, in the one wording relinkd and
    /// its clients use (a non-root caller cannot tell "not registered" from
    /// "another user's").
    public static func unknownIdentifier(named identifier: String) -> RelinkError {
        RelinkError(.unknownIdentifier, "No restore identifier \(DomainError.echo(identifier)) is registered (or it belongs to another user).")
    }

    /// The D-Bus error name.
    public var name: String { code.rawValue }

    /// The reply D-Bus sends for it.
    public var dbusError: DBusError { DBusError(DBusError.Name(name), message) }

    /// `name: message`.
    public var description: String { "\(name): \(message)" }
}
