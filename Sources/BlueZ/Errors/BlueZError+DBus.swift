public import DBus

extension BlueZError {
    /// Classifies a D-Bus error from a call to bluetoothd.
    public init(_ error: DBusError) {
        self.init(name: error.name.rawValue, message: error.message)
    }

    /// Runs a D-Bus call and turns its `DBusError` into a classified
    /// ``BlueZError``; cancellation passes through unchanged.
    static func mapping<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let e as DBusError {
            throw BlueZError(e)
        }
    }
}
