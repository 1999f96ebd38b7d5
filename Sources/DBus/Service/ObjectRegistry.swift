import Synchronization

/// The objects exported on one connection and the paths that carry an
/// `org.freedesktop.DBus.ObjectManager`.
final class ObjectRegistry: Sendable {
    struct State {
        var objects: [ObjectPath: ExportedObject] = [:]
        var managers: Set<ObjectPath> = []
    }
    let state = Mutex(State())

    func object(at path: ObjectPath) -> ExportedObject? { state.withLock { $0.objects[path] } }

    func isManager(_ path: ObjectPath) -> Bool { state.withLock { $0.managers.contains(path) } }

    /// The nearest object manager strictly above `path`, if any.
    func manager(above path: ObjectPath) -> ObjectPath? {
        state.withLock { s in
            s.managers.filter { path.isDescendant(of: $0, orSelf: false) }.max { $0.rawValue.count < $1.rawValue.count }
        }
    }

    /// Objects strictly below `path`, sorted by path.
    func objects(below path: ObjectPath) -> [ExportedObject] {
        state.withLock { s in
            s.objects.values.filter { $0.path.isDescendant(of: path, orSelf: false) }.sorted { $0.path < $1.path }
        }
    }

    /// The names of the direct children of `path` (objects and managers
    /// further down count through their first path element).
    func childNames(of path: ObjectPath) -> [String] {
        let all = state.withLock { Array($0.objects.keys) + Array($0.managers) }
        var names = Set<String>()
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        for p in all where p.rawValue.hasPrefix(prefix) && p != path {
            let rest = p.rawValue.dropFirst(prefix.count)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }
}
