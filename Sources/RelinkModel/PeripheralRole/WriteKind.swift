/// How a remote central wrote a hosted characteristic, as far as bluetoothd
/// tells relinkd (the `type` option of `GattCharacteristic1.WriteValue`;
/// docs/api/events.md, `write-request`).
public enum WriteKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A Write Command (write without response): the central waits for nothing.
    case command
    /// A Write Request: the central waits for the answer.
    case request
    /// A part of a reliable (prepared) write, delivered when the central
    /// executes it: the central waits for the answer.
    case reliable

    /// Whether the central waits for an answer (the events' `withResponse`).
    public var withResponse: Bool { self != .command }

    /// The kind a `WriteValue` call's options tell: the `type` option when
    /// given (`command`, `request`, `reliable`, any case), else `command`
    /// for a characteristic that can only be written without response, else
    /// `request`. bluetoothd 5.66 does not pass `type` to a GATT server
    /// application (`src/gatt-database.c`, `append_options`): there a
    /// reliable write reaches relinkd when the central executes it, its
    /// contiguous parts joined into one write at the first part's offset,
    /// of kind `request`.
    public init(option type: String?, onlyWithoutResponse: Bool) {
        if let type, let kind = WriteKind(rawValue: type.lowercased()) {
            self = kind
        } else {
            self = onlyWithoutResponse ? .command : .request
        }
    }
}
