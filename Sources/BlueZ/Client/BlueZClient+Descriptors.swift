public import DBus

extension BlueZClient {
    /// Reads a descriptor's value (`GattDescriptor1.ReadValue`).
    /// - Throws: ``BlueZError`` (`notPermitted`, `transient` when not connected, `deviceGone`).
    public func readDescriptor(_ descriptor: ObjectPath, timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        try await BlueZError.mapping {
            let reply = try await connection.callBlueZ(
                path: descriptor, interface: BlueZInterface.gattDescriptor,
                method: "ReadValue", arguments: [.dictionary(key: .string, value: .variant, [])], timeout: timeout)
            guard let value = reply.body.first else { throw DBusError(.invalidArgs, "empty ReadValue reply") }
            return try value.decode()
        }
    }

    /// Writes a descriptor's value (`GattDescriptor1.WriteValue`, a write request).
    /// - Throws: ``BlueZError``.
    public func writeDescriptor(_ descriptor: ObjectPath, _ value: [UInt8], timeout: Duration = .seconds(10)) async throws {
        try await BlueZError.mapping {
            _ = try await connection.callBlueZ(
                path: descriptor, interface: BlueZInterface.gattDescriptor, method: "WriteValue",
                arguments: [.array(.byte, value.map { .byte($0) }), .dictionary(key: .string, value: .variant, [])], timeout: timeout)
        }
    }
}
