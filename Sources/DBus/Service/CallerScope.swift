import Synchronization

/// Per-caller visibility of exported objects, for services whose objects
/// belong to different users (relinkd): decides, for a caller's unique
/// name, whether an object exists for it.
///
/// Install with ``Connection/setObjectFilter(_:)``. While one is installed,
/// every call to an exported object (its own methods, `Introspect`, `Get`,
/// `GetAll`, `Set`) and `GetManagedObjects` is answered after asking the
/// filter; an object the filter hides is answered as absent
/// (`org.freedesktop.DBus.Error.UnknownObject`, whatever the method or its
/// arguments), left out of `GetManagedObjects` and of the child nodes in
/// introspection data.
public typealias ObjectFilter = @Sendable (_ path: ObjectPath, _ sender: String) async -> Bool

/// An ``ObjectFilter`` held by reference, so that reading it back out of
/// its lock does not re-abstract the function (see `Connection.objectFilter`).
final class ObjectFilterBox: Sendable {
    let filter: ObjectFilter
    init(_ filter: @escaping ObjectFilter) { self.filter = filter }
}

/// Actions to run once a method call's reply has been handed to the
/// connection (see ``MethodCall/afterReply(_:)``).
final class AfterReplyActions: Sendable {
    private let actions = Mutex<[@Sendable () -> Void]>([])

    func add(_ action: @escaping @Sendable () -> Void) { actions.withLock { $0.append(action) } }

    /// Runs and forgets the actions, in the order they were added.
    func run() {
        for action in actions.withLock({ a -> [@Sendable () -> Void] in defer { a = [] }; return a }) { action() }
    }
}

extension MethodCall {
    /// Runs `action` right after the reply to this call has been queued on
    /// the connection (or, for a call without reply, after the handler
    /// returned or threw). Messages the action sends on the same
    /// connection therefore reach the caller after the reply: this is how
    /// a service sends signals that must follow a method's reply.
    public func afterReply(_ action: @escaping @Sendable () -> Void) {
        afterReplyActions.add(action)
    }
}

extension Connection {
    /// Installs (or with nil removes) the per-caller object filter; see
    /// ``ObjectFilter``.
    public func setObjectFilter(_ filter: ObjectFilter?) {
        objectFilter.withLock { $0 = filter.map(ObjectFilterBox.init) }
    }
}
