/// Lets code learn when a method call it makes through layers it does not
/// own has been queued for sending, in order, on its connection: what a
/// service needs to end its caller's turn (``MethodCall/endTurn()``) once
/// the call that carries the request on (e.g. to BlueZ) is ordered, not
/// only once it is answered.
public enum CallQueued {
    @TaskLocal static var action: (@Sendable () -> Void)?

    /// Runs `body`; `action` runs right after each method call `body` makes
    /// (on any connection, in its task or child tasks) is queued for
    /// sending, before its reply is awaited. `action` must be cheap and
    /// safe to run more than once (e.g. ``MethodCall/endTurn()``); calls
    /// that fail before they are queued do not run it.
    public static func whenQueued<T>(_ action: @escaping @Sendable () -> Void, _ body: () async throws -> T) async rethrows -> T {
        try await $action.withValue(action) { try await body() }
    }
}
