public import DBus
public import RelinkAPI
import RelinkModel

extension APIPath {
    /// The object of an identifier given as text.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) for an invalid
    ///   identifier. Clients should prefer the path `Register` returns.
    public static func central(for identifier: String) throws(RelinkClientError) -> ObjectPath {
        central(try RelinkArguments.identifier(identifier))
    }

    /// The object of a peripheral given as its UUID text.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) when `uuid` is not a UUID.
    public static func peripheral(for uuid: String) throws(RelinkClientError) -> ObjectPath {
        guard let id = try? PeripheralID(parsing: uuid) else { throw .invalid("\(uuid.debugDescription) is not a peripheral UUID.") }
        return peripheral(id)
    }

    /// The peripheral UUID of a peripheral object path, in the uppercase
    /// form of `Peripheral1.Id` and event payloads; nil when `path` is not one.
    public static func peripheralUUID(of path: ObjectPath) -> String? {
        peripheralID(of: path)?.description
    }
}
