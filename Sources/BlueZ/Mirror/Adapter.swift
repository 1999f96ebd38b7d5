public import DBus

/// A snapshot of an `org.bluez.Adapter1` object.
public struct Adapter: Sendable, Hashable {
    public var path: ObjectPath
    public var address: String?
    public var name: String?
    public var alias: String?
    public var powered: Bool
    public var discovering: Bool
    public var uuids: [String]

    init(path: ObjectPath, properties p: InterfaceProperties) {
        self.path = path
        address = p.string("Address")
        name = p.string("Name")
        alias = p.string("Alias")
        powered = p.bool("Powered") ?? false
        discovering = p.bool("Discovering") ?? false
        uuids = p.strings("UUIDs")
    }
}
