import BlueZ
import DBus
import Dispatch
import RelinkAPI
import RelinkModel
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One characteristic's stream of writes without response, with
/// back-pressure (CoreBluetooth's `canSendWriteWithoutResponse` and
/// `peripheralIsReadyToSendWriteWithoutResponse`).
///
/// A write either goes out at once or is refused: ``write(_:)`` never
/// waits, so a write that does not fit now throws `WriteQueueFull`, and
/// the stream calls `ready` once when one would fit again (after a refusal
/// only). Two transports:
/// * `acquired`: BlueZ's `AcquireWrite` socket (`SOCK_SEQPACKET`, one
///   packet per ATT Write Command). A write is one non-blocking `send`;
///   the socket's buffer is the queue, and its becoming writable is the
///   readiness. bluetoothd closes the socket when the link drops; the
///   daemon acquires a new one when the link is back (``attach(_:)``).
/// * `write-command`: `WriteValue` with type `command`, for a BlueZ that
///   does not offer `AcquireWrite` on the characteristic: a queue of
///   ``commandQueueLimit`` values sent one call at a time, in order.
///
/// The stream knows nothing of D-Bus clients: `ready` and `lost` are what
/// its holder does (relinkd's `WriteStream1` object signals its opener; a
/// transfer run by relinkd itself would send its next chunk).
final class WriteStream: Sendable {
    /// How values reach BlueZ.
    enum Transport: String, Sendable {
        /// BlueZ's `AcquireWrite` socket.
        case acquired
        /// `WriteValue` with type `command`, one call at a time.
        case writeCommand = "write-command"
    }

    /// Values the `write-command` transport holds before it refuses.
    static let commandQueueLimit = 16

    let path: ObjectPath
    let identifier: RestoreIdentifier
    let peripheral: PeripheralID
    let key: CharacteristicKey
    /// The unique bus name that opened it (nil: relinkd's own).
    let owner: String?
    let transport: Transport
    private let ready: @Sendable () -> Void
    private let lost: @Sendable () -> Void
    private let sendCommand: @Sendable ([UInt8]) async throws -> Void
    private let queue = DispatchQueue(label: "relinkd.write-stream")

    private struct State: ~Copyable {
        var socket: UnixFD?
        var writable: (any DispatchSourceWrite)?
        var limits: WriteLimits?
        var refused = false
        var commands: [[UInt8]] = []
        var draining = false
        var ended = false
        var written: UInt64 = 0
    }
    private let state: Mutex<State>

    init(path: ObjectPath, identifier: RestoreIdentifier, peripheral: PeripheralID, key: CharacteristicKey, owner: String?,
         transport: Transport, limits: WriteLimits?, socket: UnixFD?,
         ready: @escaping @Sendable () -> Void, lost: @escaping @Sendable () -> Void,
         sendCommand: @escaping @Sendable ([UInt8]) async throws -> Void) {
        self.path = path
        self.identifier = identifier
        self.peripheral = peripheral
        self.key = key
        self.owner = owner
        self.transport = transport
        self.ready = ready
        self.lost = lost
        self.sendCommand = sendCommand
        state = Mutex(State(socket: socket, limits: limits))
    }

    /// The largest value a write takes now; nil while the link is down.
    var limits: WriteLimits? { state.withLock { $0.limits } }
    /// Whether the `acquired` transport holds a socket now.
    var hasSocket: Bool { state.withLock { $0.socket != nil } }
    /// Values written since it was opened.
    var written: UInt64 { state.withLock { $0.written } }
    /// Whether it was closed.
    var ended: Bool { state.withLock { $0.ended } }

    /// Writes one value without response now, or refuses it.
    /// - Throws: `ValueTooLong` (over MTU − 3, naming the size),
    ///   `WriteQueueFull` (does not fit now; `ready` follows), `NotConnected`
    ///   (the link is down or the socket was lost; `ready` follows when it
    ///   is back), `NotConnected` also for a closed stream.
    func write(_ value: [UInt8]) throws(RelinkError) {
        enum Outcome { case done, drain, refused(RelinkError), lost(RelinkError) }
        let outcome = state.withLock { s -> Outcome in
            guard !s.ended else { return .refused(RelinkError(.notConnected, "the write stream was closed")) }
            guard let limits = s.limits else {
                s.refused = true
                return .refused(RelinkError(.notConnected, "the peripheral has no link; ReadyToWrite follows when it is back"))
            }
            guard value.count <= limits.withoutResponse else {
                return .refused(RelinkError(.valueTooLong, 
                    "\(value.count) bytes: the largest value without response on this link is \(limits.withoutResponse) bytes (ATT MTU \(limits.mtu) - 3)"))
            }
            switch transport {
            case .acquired:
                guard let socket = s.socket else {
                    s.refused = true
                    return .refused(RelinkError(.notConnected, "the write socket is being acquired again; ReadyToWrite follows"))
                }
                let n = value.withUnsafeBytes { send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if n == value.count {
                    s.written += 1
                    return .done
                }
                let error = errno
                s.refused = true
                if n < 0, error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS {
                    armWritable(&s, socket)
                    return .refused(RelinkError(.writeQueueFull, "the write socket is full; ReadyToWrite follows when a value fits"))
                }
                s.writable?.cancel()
                s.writable = nil
                s.socket = nil
                s.limits = nil
                return .lost(RelinkError(.notConnected, "the write socket was closed (errno \(error)): the link went down; ReadyToWrite follows when it is back"))
            case .writeCommand:
                guard s.commands.count < Self.commandQueueLimit else {
                    s.refused = true
                    return .refused(RelinkError(.writeQueueFull, "\(Self.commandQueueLimit) values wait for BlueZ; ReadyToWrite follows when one is sent"))
                }
                s.commands.append(value)
                s.written += 1
                if s.draining { return .done }
                s.draining = true
                return .drain
            }
        }
        switch outcome {
        case .done: return
        case .drain: Task { await self.drain() }
        case .refused(let error): throw error
        case .lost(let error):
            lost()
            throw error
        }
    }

    /// Sends the `write-command` queue, one `WriteValue` at a time, in order.
    private func drain() async {
        while true {
            let (value, wake): ([UInt8]?, Bool) = state.withLock { s in
                // A closed stream still sends what it accepted: a write's
                // reply said the value was relinkd's to send.
                guard !s.commands.isEmpty else {
                    s.draining = false
                    return (nil, false)
                }
                let value = s.commands.removeFirst()
                let wake = s.refused && s.limits != nil && !s.ended
                if wake { s.refused = false }
                return (value, wake)
            }
            if wake { ready() }
            guard let value else { return }
            do { try await sendCommand(value) } catch {
                // Lost like an ATT Write Command on a dropping link; the link's
                // state reaches the stream through attach/detach.
            }
        }
    }

    /// Watches a full socket until it is writable, then tells `ready`.
    private func armWritable(_ s: inout State, _ socket: UnixFD) {
        guard s.writable == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: socket.rawValue, queue: queue)
        source.setEventHandler { [weak self] in self?.becameWritable() }
        s.writable = source
        source.resume()
    }

    private func becameWritable() {
        let wake = state.withLock { s -> Bool in
            s.writable?.cancel()
            s.writable = nil
            guard s.refused, !s.ended, s.socket != nil else { return false }
            s.refused = false
            return true
        }
        if wake { ready() }
    }

    /// The link is up with these limits (and, for `acquired`, a new socket):
    /// a writer refused meanwhile is told it may write.
    func attach(limits: WriteLimits, socket: UnixFD?) {
        let wake = state.withLock { s -> Bool in
            guard !s.ended else { return false }
            s.limits = limits
            if transport == .acquired {
                s.writable?.cancel()
                s.writable = nil
                s.socket = socket
                guard socket != nil else { return false }
            }
            guard s.refused else { return false }
            s.refused = false
            return true
        }
        if wake { ready() }
    }

    /// The link went down: writes are refused (`NotConnected`) until
    /// ``attach(limits:socket:)``; the socket is closed.
    func detach() {
        state.withLock { s in
            s.limits = nil
            s.writable?.cancel()
            s.writable = nil
            s.socket = nil
            s.commands.removeAll()
        }
    }

    /// Ends the stream: the socket is closed (BlueZ releases the
    /// characteristic's `WriteAcquired`), later writes are refused; the
    /// `write-command` queue is still sent, in order (the values were accepted).
    func close() {
        state.withLock { s in
            s.ended = true
            s.writable?.cancel()
            s.writable = nil
            s.socket = nil
        }
    }
}
