public import DBus
import RelinkAPI

/// How relinkd learns the Unix user behind a caller's unique bus name.
/// Production asks the bus (`GetConnectionUnixUser`); tests may inject a
/// mapping to play callers of other users on a bus where every process is
/// root.
public struct CallerIdentity: Sendable {
    let resolve: @Sendable (Connection, String) async throws -> UInt32

    /// - Parameter resolve: the UID of a unique name; throws when unknown.
    public init(_ resolve: @escaping @Sendable (Connection, String) async throws -> UInt32) {
        self.resolve = resolve
    }

    /// Asks the bus.
    public static let bus = CallerIdentity { connection, name in try await connection.unixUser(of: name) }

    /// The caller of a method call.
    /// - Throws: `Failed` when the bus cannot tell (the caller left).
    func caller(of call: MethodCall) async throws(RelinkError) -> APICaller {
        do { return APICaller(name: call.sender, uid: try await resolve(call.connection, call.sender)) } catch {
            throw RelinkError(.failed, "cannot tell the caller's user: \(error)")
        }
    }
}
