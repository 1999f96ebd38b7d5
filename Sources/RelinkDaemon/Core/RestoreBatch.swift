import BlueZ
import DBus
import Logging
import RelinkStore
import Restoration
import RelinkModel

/// Work the daemon gathers while it handles one input (or restores the
/// whole store at start-up) and carries out together at the end:
///
/// * store writes of machine actions (`persist`, `emit`), handed to the
///   store together at the scope's end (one group commit, not one per
///   action; committed before any later control call is answered and
///   before any client can read them from the store);
/// * `StartNotify` calls, issued concurrently with each other and with that
///   commit instead of one after another, their outcomes reported back as
///   inputs;
/// * at start-up only, the `Connect` calls that adopt links BlueZ still
///   holds (BlueZ answers them at once), issued concurrently, their results
///   fed back into the machines in the order the machines asked.
///
/// Scopes nest (a machine's action list inside the start-up scope); only the
/// outermost scope's end carries the work out.
struct RestoreBatch: Sendable {
    /// One pending `StartNotify`.
    struct Notify: Sendable {
        var peripheral: PeripheralID
        var key: CharacteristicKey
        var characteristic: ObjectPath
    }

    /// One adopting `Connect` gathered at start-up.
    struct Adoption: Sendable {
        var intent: ConnectionIntentID
        var address: BluetoothAddress
        var device: ObjectPath
    }

    /// An event whose journal line is written once its commit returned.
    struct EventNote: Sendable {
        var name: String
        var identifier: RestoreIdentifier
        /// Nil for an event about no peripheral (`adapter-state`).
        var peripheral: PeripheralID?

        /// Values and advertisements come as fast as a peripheral sends
        /// them (a band streams several a second): at `info` they would
        /// flood the journal, and journald's rate limit would then drop
        /// relinkd's decisions with them. They are at `debug`, and so is
        /// `adapter-state`, which goes to every identifier at once: its one
        /// `adapter-state-changed` line says it (not one line per
        /// identifier). Every other event (connected, disconnected, failed,
        /// restored, names) is at `info`.
        var level: Logger.Level {
            switch name {
            case "value-notified", "discovered", "adapter-state": .debug
            default: .info
            }
        }
    }

    /// Nesting depth of open scopes; 0 when none is open.
    var depth = 0
    /// One `commit` call's mutations, with the events it appends.
    struct Request: Sendable {
        var mutations: [StoreMutation]
        var notes: [EventNote] = []
    }

    /// Store requests in order, as the `commit` calls made them.
    var requests: [Request] = []
    var notifies: [Notify] = []
    /// Peripherals whose link was reported up in this scope: their
    /// ``HeldSessions`` values go after the scope's other writes.
    var released: [PeripheralID] = []
    /// Notify sessions held with bluetoothd (not reset by scopes).
    var held = HeldSessions()
    /// A ``DaemonInput/flushCommits`` input is on its way.
    var flushQueued = false
    /// Non-nil only while start-up gathers adopting connects.
    var adoptions: [Adoption]?

    var isOpen: Bool { depth > 0 }
}
