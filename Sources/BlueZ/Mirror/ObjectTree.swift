public import DBus

/// Properties of one interface, by name, with variants unwrapped.
public typealias InterfaceProperties = [String: DBusValue]
/// Interfaces of one object, by interface name.
public typealias ObjectInterfaces = [String: InterfaceProperties]
/// The shape of `ObjectManager.GetManagedObjects`: `a{oa{sa{sv}}}`.
public typealias ManagedObjects = [ObjectPath: ObjectInterfaces]

extension DBusValue {
    /// Decodes a `GetManagedObjects` reply body value, unwrapping the
    /// property variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not `a{oa{sa{sv}}}`.
    func managedObjects() throws(DBusError) -> ManagedObjects {
        let raw: [ObjectPath: [String: [String: DBusValue]]] = try decode()
        return raw.mapValues { $0.mapValues { $0.mapValues(\.unwrapped) } }
    }

    /// Decodes `a{sa{sv}}` (the interfaces of InterfacesAdded).
    func objectInterfaces() throws(DBusError) -> ObjectInterfaces {
        let raw: [String: [String: DBusValue]] = try decode()
        return raw.mapValues { $0.mapValues(\.unwrapped) }
    }

    /// Decodes `a{sv}` (the changed properties of PropertiesChanged).
    /// Read straight from the entries (one dictionary, not two): every
    /// notified value comes as one of these.
    func interfaceProperties() throws(DBusError) -> InterfaceProperties {
        guard case .dictionary(.string, .variant, let entries) = self else {
            throw DBusError(.invalidArgs, "expected a{sv}, got \(type.signature)")
        }
        var properties = InterfaceProperties(minimumCapacity: entries.count)
        for entry in entries {
            guard case .string(let name) = entry.key else { throw DBusError(.invalidArgs, "a{sv} with a key that is not a string") }
            properties[name] = entry.value.unwrapped
        }
        return properties
    }
}
