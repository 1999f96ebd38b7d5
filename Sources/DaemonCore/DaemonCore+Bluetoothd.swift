public import RelinkModel
public import Restoration

// bluetoothd gone, back, and the adapter's power: every link and notify
// session ends with bluetoothd or with the power; every machine is told.
extension DaemonCore {
    /// Why bluetoothd answers again.
    public enum BluetoothdReturn: String, Sendable, Hashable {
        /// `org.bluez` has a new owner: bluetoothd restarted or crashed.
        case restarted
        /// The bus lets relinkd's calls through again (its policy was reloaded).
        case accessGranted
        /// bluetoothd held its name without answering, and answers now.
        case answered
    }

    /// bluetoothd left the bus or stopped answering: links, notify sessions
    /// and the GATT grace's waits are gone; every machine hears it, in intent order.
    mutating func bluetoothdLost() -> [Effect] {
        let notified = endLinks()
        return [.bluetoothdLost] + stopped(notified, Self.bluetoothdGone) + peersGone()
            + [.endNotifySessions, .feedEach(machines.keys.sorted(), .bluetoothdRestarted)]
    }

    /// bluetoothd answers again (its objects read). `adapterOn`: the adapter
    /// is powered in the new bluetoothd's objects. A SIGTERMed bluetoothd
    /// powers the adapter off as it exits and the new one powers it on
    /// before relinkd reads its objects, so no `Powered` change is ever
    /// seen: the machines waiting for the adapter are told it is up.
    /// Then the GATT databases of resolved links are read again, and the
    /// peripheral role hosted again (bluetoothd forgot every application).
    mutating func bluetoothdBack(_ why: BluetoothdReturn, adapterOn: Bool) -> [Effect] {
        let notified = endLinks()
        _ = scans.restart()  // the BlueZ layer re-applies discovery itself
        let intents = machines.keys.sorted()
        var effects: [Effect] = [.bluetoothdBack(why)] + stopped(notified, .bluetoothdRestarted)
            + [.endNotifySessions, .feedEach(intents, .bluetoothdRestarted)]
        if adapterOn { effects.append(.feedEach(intents, .adapterPowered(true))) }
        effects += [.readResolvedDatabases, .hostAll(reason: "bluetoothd restarted")]
        return effects
    }

    /// relinkd's adapter was powered on or off. Off ends every link and
    /// notify session; on restarts discovery's bookkeeping (the BlueZ layer
    /// applied it again) and hosts the peripheral role again.
    mutating func adapterPowered(_ on: Bool) -> [Effect] {
        var effects: [Effect] = [.adapterPowerReported(on)]
        if on {
            _ = scans.restart()
        } else {
            effects += stopped(endLinks(), .adapterOff)
            effects.append(.endNotifySessions)
        }
        effects.append(.feedEach(machines.keys.sorted(), .adapterPowered(on)))
        if on { effects.append(.hostAfterPowerOn) }
        return effects
    }

    /// No link is up: nothing is armed, no GATT grace waits. Returns what
    /// was notifying, per peripheral.
    private mutating func endLinks() -> [PeripheralID: [CharacteristicKey]] {
        gattGrace.reset()
        return planner.resetAll()
    }
}
