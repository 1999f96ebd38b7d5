public import DBus
import RelinkAPI
import Synchronization

/// A stream of writes without response with back-pressure on one
/// characteristic (`org.relink.WriteStream1`, docs/api/WriteStream1.md):
/// CoreBluetooth's `canSendWriteWithoutResponse` and
/// `peripheralIsReadyToSendWriteWithoutResponse`.
///
/// ```swift
/// let stream = try await central.openWriteStream(peripheral: p, service: s, characteristic: c)
/// for chunk in chunks { try await stream.writeWhenReady(chunk) }   // loses nothing
/// try await stream.close()
/// ```
///
/// ``write(_:)`` never waits: the value goes out now, or relinkd refuses it
/// with ``RelinkClientError/Name/writeQueueFull`` and ``canSendWriteWithoutResponse``
/// turns false until relinkd's `ReadyToWrite` signal (``waitUntilReady()``).
/// The stream belongs to the connection of the ``RelinkManager`` that opened
/// it: it ends with ``close()``, when that connection closes, or when
/// relinkd restarts (writes then throw `UnknownIdentifier`, naming the
/// stream: open a new one). Across link drops it stays open.
public final class RelinkWriteStream: Sendable {
    /// The stream's object, `/org/relink/stream/<n>`.
    public let object: ObjectPath
    /// The largest value a write took when the stream was opened (ATT MTU − 3;
    /// the link's MTU may change after a drop: ``properties()`` has it now).
    public let maximumLength: Int
    let manager: RelinkManager
    let signals: SignalStream
    let gate = Gate()

    /// The stream's readiness, shared with the task that reads its
    /// `ReadyToWrite` signals.
    final class Gate: Sendable {
        struct State {
            /// False from a refusal until `ReadyToWrite`.
            var canSend = true
            /// `ReadyToWrite` signals seen so far (a refusal whose reply comes
            /// after the signal that follows it must not hide that signal).
            var readySignals = 0
            /// Closed by ``RelinkWriteStream/close()``, or the signal subscription ended.
            var ended = false
            /// Tasks in ``RelinkWriteStream/waitUntilReady()``, by a number of their own.
            var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
            var nextWaiter = 0
        }
        let state = Mutex(State())

        /// A `ReadyToWrite` signal (`ended` false), or the end of the stream.
        func open(ended: Bool) {
            let waiters = state.withLock { s in
                if ended { s.ended = true } else {
                    s.canSend = true
                    s.readySignals += 1
                }
                defer { s.waiters = [:] }
                return s.waiters.values
            }
            for w in waiters { w.resume() }
        }

        /// The `ReadyToWrite` signals seen so far: taken before a write is sent.
        var signalsSeen: Int { state.withLock { $0.readySignals } }

        /// A write sent when `seen` signals had come was refused: the stream
        /// cannot send until the next `ReadyToWrite`, unless one came since.
        func refused(seen: Int) {
            state.withLock { s in if s.readySignals == seen { s.canSend = false } }
        }
    }

    init(object: ObjectPath, maximumLength: Int, manager: RelinkManager, signals: SignalStream) {
        self.object = object
        self.maximumLength = maximumLength
        self.manager = manager
        self.signals = signals
        Task { [signals, gate] in
            do {
                for try await message in signals where message.member == WriteStream1Member.readyToWrite.rawValue {
                    gate.open(ended: false)
                }
            } catch {}
            gate.open(ended: true)
        }
    }

    /// Whether a write is expected to fit now: false after a refusal until
    /// relinkd's `ReadyToWrite` signal (CoreBluetooth's `canSendWriteWithoutResponse`).
    public var canSendWriteWithoutResponse: Bool { gate.state.withLock { $0.canSend && !$0.ended } }

    /// Writes one value without response now, or throws without writing it.
    /// - Throws: ``RelinkClientError``: `WriteQueueFull` (it does not fit
    ///   now: ``waitUntilReady()``, then write it again), `ValueTooLong`
    ///   (over the link's MTU − 3), `NotConnected` (no link; `ReadyToWrite`
    ///   follows when it is back), `InvalidArguments` (over 512 bytes),
    ///   `UnknownIdentifier` (the stream is closed or relinkd restarted:
    ///   open a new one); unreachable.
    public func write(_ value: [UInt8]) async throws(RelinkClientError) {
        try RelinkArguments.checkValue(value)
        let seen = gate.signalsSeen
        do {
            _ = try await manager.call(object, RelinkNames.writeStream, WriteStream1Member.write.rawValue,
                                       [.array(.byte, value.map(DBusValue.byte))])
        } catch {
            if error.name == .writeQueueFull || error.name == .notConnected {
                gate.refused(seen: seen)
            }
            throw error
        }
    }

    /// Returns when a write may fit again: at once when
    /// ``canSendWriteWithoutResponse``, else at relinkd's `ReadyToWrite`
    /// signal (CoreBluetooth's `peripheralIsReadyToSendWriteWithoutResponse`),
    /// when the stream ended (a write then says why), or when the calling
    /// task is cancelled.
    public func waitUntilReady() async {
        let id = gate.state.withLock { s in
            defer { s.nextWaiter += 1 }
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = gate.state.withLock { s in
                    if s.canSend || s.ended || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            gate.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Writes one value, waiting for `ReadyToWrite` after each refusal
    /// (`WriteQueueFull`, or `NotConnected` while the link is down): a
    /// writer that sends every value through it loses none that relinkd
    /// refused. It waits as long as the link stays down.
    /// - Returns: how many times relinkd refused it before it went out.
    /// - Throws: ``RelinkClientError``: as ``write(_:)`` but for the two it
    ///   waits on; `Failed` when the task is cancelled while it waits.
    @discardableResult
    public func writeWhenReady(_ value: [UInt8]) async throws(RelinkClientError) -> Int {
        var refusals = 0
        while true {
            await waitUntilReady()
            if Task.isCancelled { throw RelinkClientError(.failed, "Cancelled while waiting for ReadyToWrite; the value was not written.") }
            do {
                try await write(value)
                return refusals
            } catch where (error.name == .writeQueueFull || error.name == .notConnected) && !gate.state.withLock({ $0.ended }) {
                refusals += 1
            }
        }
    }

    /// The stream's properties now.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier` (closed), `Failed` (an unreadable reply); unreachable.
    public func properties() async throws(RelinkClientError) -> RelinkWriteStreamProperties {
        try RelinkWriteStreamProperties(await manager.properties(of: object, interface: RelinkNames.writeStream))
    }

    /// Ends the stream and releases the characteristic (`Close`); later
    /// writes throw. Waiters of ``waitUntilReady()`` return.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier` (already closed); unreachable.
    public func close() async throws(RelinkClientError) {
        defer { signals.cancel() }
        gate.open(ended: true)
        _ = try await manager.call(object, RelinkNames.writeStream, WriteStream1Member.close.rawValue)
    }
}

/// The properties of a `WriteStream1` object.
public struct RelinkWriteStreamProperties: Sendable, Hashable {
    /// The peripheral's UUID.
    public var peripheral: String
    /// The service UUID.
    public var service: String
    /// The characteristic UUID.
    public var characteristic: String
    /// The largest value a write takes now (ATT MTU − 3); 0 while the link is down.
    public var maximumLength: UInt16
    /// `acquired` (BlueZ's `AcquireWrite` socket) or `write-command` (`WriteValue`, type command).
    public var transport: String

    /// - Throws: ``RelinkClientError`` (`Failed`) when `Peripheral` is
    ///   missing or a property has another type than documented.
    public init(_ properties: [String: DBusValue]) throws(RelinkClientError) {
        let r = PropertyReader("WriteStream1", properties)
        peripheral = try r.required(WriteStream1Property.peripheral.rawValue)
        service = try r.value(WriteStream1Property.service.rawValue, default: "")
        characteristic = try r.value(WriteStream1Property.characteristic.rawValue, default: "")
        maximumLength = try r.value(WriteStream1Property.maximumLength.rawValue, default: 0)
        transport = try r.value(WriteStream1Property.transport.rawValue, default: "")
    }
}

extension RelinkManager {
    /// `Central1.OpenWriteStream`: a stream of writes without response with
    /// back-pressure on a characteristic with `write-without-response`,
    /// owned by this connection. Opening the same characteristic again
    /// from the same connection gives the same relinkd stream.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `UnknownCharacteristic`, `NotConnected`, `NotSupported` (no `write-without-response`), `Failed`; unreachable.
    public func openWriteStream(_ identifier: String, peripheral: String, service: String,
                                characteristic: String) async throws(RelinkClientError) -> RelinkWriteStream {
        let reply = try await central(identifier, Central1Member.openWriteStream.rawValue, try gattArguments(peripheral, service, characteristic))
        let (path, maximum) = try decode(reply, "OpenWriteStream", ObjectPath.self, UInt16.self)
        let signals: SignalStream
        do {
            // Subscribed before any write: ReadyToWrite only follows a refused write.
            signals = try await connection.signals(matching: SignalMatch(
                sender: RelinkNames.busName, interface: RelinkNames.writeStream, member: WriteStream1Member.readyToWrite.rawValue, path: path))
        } catch {
            throw RelinkClientError.from(error)
        }
        return RelinkWriteStream(object: path, maximumLength: Int(maximum), manager: self, signals: signals)
    }
}

extension RelinkCentral {
    /// Opens a stream of writes without response with back-pressure on a
    /// characteristic of a connected peripheral (``RelinkWriteStream``).
    /// - Throws: ``RelinkClientError``: as ``RelinkManager/openWriteStream(_:peripheral:service:characteristic:)``;
    ///   `NotConnected` when the central is not connected.
    public func openWriteStream(peripheral: String, service: String, characteristic: String) async throws(RelinkClientError) -> RelinkWriteStream {
        try await connected().openWriteStream(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic)
    }
}
