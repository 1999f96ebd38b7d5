import Synchronization

/// An object exported at a path with one or more interfaces, holding the
/// values of their properties.
///
/// Create it, then ``Connection/export(_:)`` it. Changing a property with
/// ``setValue(_:of:in:)`` emits `PropertiesChanged` when exported.
public final class ExportedObject: Sendable {
    /// Where the object is exported; fixed for its lifetime.
    public let path: ObjectPath
    /// The interfaces, in declaration order.
    public let interfaces: [DBusInterface]

    /// The property values: per interface (in ``interfaces``' order), per
    /// property (in its declaration order), nil when unset. Arrays, not
    /// dictionaries: relinkd holds thousands of these objects, and a
    /// dictionary of 20 values took twice the memory.
    private let values: Mutex<[[DBusValue?]]>
    /// The I/O loop of the connection this object is exported on (not the
    /// `Connection`, so that no reference cycle keeps the connection open).
    private let loop = Mutex<ConnectionLoop?>(nil)

    /// An object with its interfaces and initial property values, checked
    /// here; it serves nothing until exported.
    /// - Parameters:
    ///   - values: initial property values by interface and property name.
    ///     A property without a value is left out of `GetAll` and `Get`
    ///     replies `InvalidArgs` for it, as BlueZ does for unset optional
    ///     properties.
    /// - Throws: ``DBusError`` (`InvalidArgs`) for an invalid interface,
    ///   two interfaces of the same name, or a value of the wrong type or
    ///   for an undeclared property.
    public convenience init(path: ObjectPath, interfaces: [DBusInterface], values: [String: [String: DBusValue]] = [:]) throws(DBusError) {
        try self.init(path: path, interfaces: try DBusInterfaceSet(interfaces), values: values)
    }

    /// An object with interfaces checked once before (many objects of the
    /// same kind: their interfaces are not checked again for each), and
    /// initial property values, checked here.
    /// - Throws: ``DBusError`` (`InvalidArgs`) for a value of the wrong type
    ///   or for an undeclared property.
    public init(path: ObjectPath, interfaces set: DBusInterfaceSet, values: [String: [String: DBusValue]] = [:]) throws(DBusError) {
        let interfaces = set.interfaces
        var slots = interfaces.map { [DBusValue?](repeating: nil, count: $0.properties.count) }
        for (iname, props) in values {
            guard let i = interfaces.firstIndex(where: { $0.name == iname }) else {
                throw DBusError(.invalidArgs, "values for undeclared interface \(iname)")
            }
            for (pname, v) in props {
                let j = try Self.check(interfaces[i], pname, v)
                slots[i][j] = v
            }
        }
        self.path = path
        self.interfaces = interfaces
        self.values = Mutex(slots)
    }

    /// Checks a value for a property; returns the property's position.
    @discardableResult
    private static func check(_ iface: DBusInterface, _ name: String, _ v: DBusValue) throws(DBusError) -> Int {
        guard let j = iface.position(ofProperty: name) else {
            throw DBusError(.unknownProperty, "no property \(name) in \(iface.name)")
        }
        let p = iface.properties[j]
        guard v.type == p.type else {
            throw DBusError(.invalidArgs, "property \(name) has type '\(p.type)', got '\(v.type)'")
        }
        // The type is the declared one, checked with its interface.
        try v.validateContents(depth: 0)
        return j
    }

    func interface(_ name: String) -> DBusInterface? { interfaces.first { $0.name == name } }

    /// Where an interface is in ``interfaces``.
    private func slot(_ interface: String) -> Int? { interfaces.firstIndex { $0.name == interface } }

    /// The current values of an interface's properties, by position (none
    /// for an interface the object does not have).
    private func current(_ interface: String) -> [DBusValue?] {
        guard let i = slot(interface) else { return [] }
        return values.withLock { $0[i] }
    }

    /// The current value of a property, or nil when unset.
    public func value(of property: String, in interface: String) -> DBusValue? {
        guard let i = slot(interface), let j = interfaces[i].position(ofProperty: property) else { return nil }
        return values.withLock { $0[i][j] }
    }

    /// All set properties of an interface that can be read, in declaration order.
    func readableValues(_ iface: DBusInterface) -> [DBusValue.DictionaryEntry] {
        let current = current(iface.name)
        return zip(iface.properties, current).compactMap { p, value in
            guard p.access.readable, let v = value else { return nil }
            return .init(.string(p.name), .variant(v))
        }
    }

    /// As ``readableValues(_:)``, with computed properties (``DBusProperty/getter``) asked for `call`.
    func readableValues(_ iface: DBusInterface, for call: MethodCall) async throws -> [DBusValue.DictionaryEntry] {
        let current = current(iface.name)
        var entries: [DBusValue.DictionaryEntry] = []
        for (j, p) in iface.properties.enumerated() where p.access.readable {
            if let getter = p.getter {
                entries.append(.init(.string(p.name), .variant(try await getter(call))))
            } else if j < current.count, let v = current[j] {
                entries.append(.init(.string(p.name), .variant(v)))
            }
        }
        return entries
    }

    /// Sets (or, with nil, unsets) a property. When exported and the
    /// property emits changes, sends `PropertiesChanged` (unset properties
    /// are listed as invalidated). Setting an equal value sends nothing.
    /// - Throws: ``DBusError``: `UnknownInterface`/`UnknownProperty`, or
    ///   `InvalidArgs` for a value of the wrong type (nothing changed);
    ///   `Disconnected` when the value was stored but the connection is
    ///   closed, so the signal could not be sent.
    public func setValue(_ value: DBusValue?, of property: String, in interface: String) throws(DBusError) {
        try setValues([property: value], in: interface)
    }

    /// Sets several properties of one interface; one `PropertiesChanged`.
    /// - Throws: as ``setValue(_:of:in:)``; nothing is changed on error.
    public func setValues(_ changes: [String: DBusValue?], in interface: String) throws(DBusError) {
        try setValues(changes, in: interface, destinations: nil)
    }

    /// As ``setValues(_:in:)``; with `destinations`, `PropertiesChanged` is
    /// unicast: one signal to each of these unique names (none for an
    /// empty list) instead of one broadcast.
    /// - Throws: as ``setValues(_:in:)``.
    public func setValues(_ changes: [String: DBusValue?], in interface: String, destinations: [String]?) throws(DBusError) {
        guard let i = slot(interface) else {
            throw DBusError(.unknownInterface, "no interface \(interface) at \(path)")
        }
        let iface = interfaces[i]
        for (name, v) in changes {
            if let v { try Self.check(iface, name, v) } else if iface.property(name) == nil {
                throw DBusError(.unknownProperty, "no property \(name) in \(interface)")
            }
        }
        var changed: [DBusValue.DictionaryEntry] = []
        var invalidated: [DBusValue] = []
        values.withLock { all in
            for (j, p) in iface.properties.enumerated() {
                guard let entry = changes[p.name] else { continue }
                if all[i][j] == entry { continue }
                all[i][j] = entry
                guard p.emitsChanged, p.access.readable else { continue }
                if let entry { changed.append(.init(.string(p.name), .variant(entry))) } else { invalidated.append(.string(p.name)) }
            }
        }
        guard !changed.isEmpty || !invalidated.isEmpty, let loop = loop.withLock({ $0 }) else { return }
        let body: [DBusValue] = [.string(interface), .dictionary(key: .string, value: .variant, changed), .array(.string, invalidated)]
        for destination in destinations.map({ $0.map(Optional.some) }) ?? [nil] {
            try loop.submit(
                .send(Message.signal(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", body: body, destination: destination)))
        }
    }

    /// Emits a declared signal of one of this object's interfaces, to
    /// `destination` only (unicast) when given, else broadcast.
    /// - Throws: ``DBusError``: `UnknownInterface`, `UnknownMethod` for an
    ///   undeclared signal, `InvalidArgs` when the arguments do not match
    ///   its declaration, `Disconnected`; `Failed` when not exported.
    public func emit(_ signal: String, in interface: String, _ arguments: [DBusValue] = [], destination: String? = nil) throws(DBusError) {
        guard let iface = self.interface(interface) else {
            throw DBusError(.unknownInterface, "no interface \(interface) at \(path)")
        }
        guard let s = iface.signals.first(where: { $0.name == signal }) else {
            throw DBusError(.unknownMethod, "no signal \(signal) in \(interface)")
        }
        guard arguments.map(\.type) == s.arguments.map(\.type) else {
            throw DBusError(.invalidArgs, "signal \(signal) takes '\(s.arguments.map(\.type.signature).joined())'")
        }
        guard let loop = loop.withLock({ $0 }) else { throw DBusError(.failed, "\(path) is not exported") }
        let m = try Message.signal(path: path, interface: interface, member: signal, body: arguments, destination: destination)
        try loop.submit(.send(m))
    }

    func attach(_ l: ConnectionLoop?) { loop.withLock { $0 = l } }

    /// `{interface: {property: value}}` as in `GetManagedObjects`.
    func managedValue() -> DBusValue {
        .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            interfaces.map { .init(.string($0.name), .dictionary(key: .string, value: .variant, readableValues($0))) })
    }
}

/// Interfaces checked (``DBusInterface/validate()``, no name twice), to
/// export many objects of the same kind without checking them again.
public struct DBusInterfaceSet: Sendable {
    /// The interfaces, in declaration order.
    public let interfaces: [DBusInterface]

    /// Checks the interfaces.
    /// - Throws: ``DBusError`` (`InvalidArgs`) for an invalid interface or
    ///   two interfaces of the same name.
    public init(_ interfaces: [DBusInterface]) throws(DBusError) {
        var seen = Set<String>()
        for i in interfaces {
            try i.validate()
            guard seen.insert(i.name).inserted else { throw DBusError(.invalidArgs, "interface \(i.name) declared twice") }
        }
        self.interfaces = interfaces
    }
}
