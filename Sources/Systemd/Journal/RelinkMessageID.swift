public import Logging

/// The journal `MESSAGE_ID` of each important relink event. The ids are fixed
/// (generated once with `systemd-id128 new`) and explained in
/// `systemd/relink.catalog`; never change or reuse one.
///
/// Query them with, for example,
/// `journalctl -u relinkd MESSAGE_ID=ec230f08c6a5470e948359ac30c4fb3d`.
public enum RelinkMessageID: String, CaseIterable, Sendable {
    /// relinkd started and is ready (store loaded, identifiers resumed).
    case started = "cfbe87f8a45d45d1bd944fd6e9a7ea25"
    /// relinkd began a graceful shutdown.
    case stopping = "440ed7ebbefa48ddb0e04a0885029f02"
    /// A restore identifier's state was restored after a start.
    case restored = "ec230f08c6a5470e948359ac30c4fb3d"
    /// A peripheral link was (re)connected.
    case connected = "ae1ccdd8d0444c6ead005f4e577d7414"
    /// A connection attempt failed; another follows according to the strategy.
    case connectFailed = "2fdf5244b34f436eace2b7290ba4e3bd"
    /// Reconnection stopped trying for good.
    case reconnectGaveUp = "83006be1fff34ea7949b0cbd0cb2483a"
    /// A peripheral link went down.
    case disconnected = "71e5006e852f4305a67be2487e924e59"
    /// A damaged state file was moved aside and relinkd started from empty state.
    case stateFileQuarantined = "e4ef916c72834655a87ede9203e67404"
    /// bluetoothd went away and came back; relinkd re-synchronised.
    case bluetoothdRestarted = "d8751b32fa6e45b98b8d0ca7d5e8cf21"
    /// An adapter was powered on or off.
    case adapterPowerChanged = "d89e6239a8c64ac7bdc16cb58d348430"
    /// An adapter disappeared from BlueZ.
    case adapterRemoved = "6768ecc3b6224124b3a3bb08eca9914c"
    /// The event-loop liveness probe failed; watchdog pings are withheld.
    case livenessProbeFailed = "f1f262de6d254e84b4fa96efd9ca4cee"

    /// The journal field value: 32 lowercase hex digits.
    public var id: String { rawValue }

    /// The short event name used in `RELINK_EVENT`, such as `connect-failed`.
    public var eventName: String {
        var name = ""
        for character in String(describing: self) {
            if character.isUppercase { name += "-" + character.lowercased() } else { name.append(character) }
        }
        return name
    }

    /// `MESSAGE_ID` and `RELINK_EVENT` metadata for a log call:
    /// `logger.info("...", metadata: RelinkMessageID.connected.metadata)`.
    public var metadata: Logger.Metadata {
        [RelinkField.messageID: .string(id), RelinkField.event: .string(eventName)]
    }
}
