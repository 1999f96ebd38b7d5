/// # DBus: relink's D-Bus binding over libdbus-1
///
/// A library with no knowledge of BlueZ. The public API:
///
/// * Values: ``DBusValue`` (every D-Bus type; containers carry their element
///   ``DBusType`` so empty ones keep their signature), ``Signature``,
///   ``ObjectPath`` and ``UnixFD`` (owned, closed on deinit). Everything is
///   validated before it reaches libdbus (which aborts on bad input).
///   ``DBusEncodable``/``DBusDecodable`` map Swift types: integers, `Bool`,
///   `Double`, `String`, `ObjectPath`, `Signature`, arrays, dictionaries,
///   and `DBusValue` itself standing for a variant, so `[String: DBusValue]`
///   is `a{sv}`.
/// * Errors: everything throws ``DBusError`` (name + message) with the
///   well-known names as ``DBusError/Name`` constants, except that
///   cancellation throws `CancellationError`.
/// * Client: ``Connection`` (``Connection/connect(to:)``,
///   ``Connection/call(destination:path:interface:method:arguments:timeout:)``,
///   ``Connection/signals(matching:)`` with ``SignalMatch``,
///   ``Connection/nameOwnerChanges(for:)``, ``Connection/requestName(_:flags:)``).
/// * Service: ``ExportedObject`` with ``DBusInterface`` (``DBusMethod``,
///   ``DBusProperty``, ``DBusSignal``), ``Connection/export(_:)``,
///   ``Connection/addObjectManager(at:)`` and ``Connection/serve()``.
///   Properties, ObjectManager, Introspectable and Peer are provided.
///
/// Threading: each connection owns one I/O thread that alone touches libdbus
/// (see `ConnectionLoop`); calls, signal streams and handlers are plain
/// Swift concurrency. Incoming signals are delivered in bus order, in an
/// unbounded buffer whose size ``SignalStream/pending`` shows. For the
/// lowest latency, short non-blocking code (e.g. a loop consuming signals)
/// can run on the I/O thread: `withTaskExecutorPreference(bus.executor)`
/// (see ``Connection/executor`` and ``Connection/serve(handlersOnIOThread:)``;
/// docs/benchmarks.md has the figures).
///
/// ```swift
/// import DBus
///
/// // Connect (honours DBUS_SYSTEM_BUS_ADDRESS) and call with a timeout.
/// let bus = try await Connection.connect(to: .system)
/// let reply = try await bus.call(
///     destination: "org.bluez", path: ObjectPath("/"),
///     interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects",
///     timeout: .seconds(5))
///
/// // Decode GetManagedObjects: a{oa{sa{sv}}}.
/// let objects = try reply.decode([ObjectPath: [String: [String: DBusValue]]].self)
/// for (path, interfaces) in objects {
///     if let props = interfaces["org.bluez.Device1"],
///        let address = props["Address"]?.stringValue { print(path, address) }
/// }
///
/// // Subscribe to signals by match rule (AddMatch now, RemoveMatch when the loop ends).
/// let changes = try await bus.signals(matching: SignalMatch(
///     sender: "org.bluez", interface: "org.freedesktop.DBus.Properties",
///     member: "PropertiesChanged", pathNamespace: ObjectPath("/org/bluez")))
/// for try await signal in changes {
///     let (iface, changed, _) = try signal.decode(String.self, [String: DBusValue].self, [String].self)
///     print(signal.path?.rawValue ?? "", iface, changed)
/// }
///
/// // Export an object with a method and a property, then serve.
/// let manager = DBusInterface(
///     "org.relink.Manager1",
///     methods: [DBusMethod("Ping", in: [DBusArgument("text", .string)], out: [DBusArgument("echo", .string)]) { call in
///         let text = try call.decode(String.self)
///         let uid = try await call.callerUnixUser()   // for access checks
///         return [.string("\(text) from \(uid)")]
///     }],
///     properties: [DBusProperty("Version", .string)])
/// let object = try ExportedObject(path: ObjectPath("/org/relink"), interfaces: [manager],
///                                 values: ["org.relink.Manager1": ["Version": .string("1")]])
/// bus.addObjectManager(at: .root)
/// try bus.export(object)
/// _ = try await bus.requestName("org.relink")
/// try object.setValue(.string("2"), of: "Version", in: "org.relink.Manager1")  // emits PropertiesChanged
/// try await bus.serve()   // e.g. in a ServiceGroup service; returns when cancelled or closed
/// ```
public enum DBusModule {}
