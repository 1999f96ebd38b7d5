import BlueZ
import DBus
public import RelinkModel

// The fake bluetoothd's own life and its adapter's, as a test plays them:
// bluetoothd killed, stopped, restarted (keeping kernel links or not),
// refused by a D-Bus policy; the adapter powered, blocked, removed.
extension FakeBlueZ {
    /// bluetoothd dies and a new one starts: every link and session is
    /// gone, devices it had stored come back disconnected.
    public func restartBluetoothd() { restartBluetoothd(keeping: []) }

    func restartBluetoothd(keeping kept: Set<BluetoothAddress>) {
        stopBluetoothd(keeping: kept)
        startBluetoothd()
    }

    /// bluetoothd dies (`org.bluez` leaves the bus): every link and
    /// session is gone; it stays away until ``startBluetoothd()``.
    public func stopBluetoothd() { stopBluetoothd(keeping: []) }

    /// bluetoothd dies; the kernel keeps the links of `kept` (a SIGKILL),
    /// which the next bluetoothd shows connected until ``dropKeptLinks()``.
    func stopBluetoothd(keeping kept: Set<BluetoothAddress>) {
        guard bluetoothdUp else { return }
        preKnown.formUnion(knownDevices)
        connected = kept
        keptLinks = kept
        sessions = []
        autoConnectUUIDs = []
        forgetHosting()
        discovery = nil
        bluetoothdUp = false
        mirror = Mirror(managedObjects: [:], knownNames: mirror.knownNames)
        emit(.serviceLost)
    }

    /// A new bluetoothd starts: devices it had stored come back disconnected.
    public func startBluetoothd() {
        guard !bluetoothdUp else { return }
        bluetoothdUp = true
        guard !accessRefused else { return }
        rebuild(reason: .bluetoothdRestarted)
    }

    /// The bus starts (or stops) refusing the central's calls to
    /// bluetoothd (`AccessDenied`, a D-Bus policy): while it does, the
    /// central sees no bluetoothd; bluetoothd itself keeps its links.
    public func setAccessRefused(_ refused: Bool) {
        guard refused != accessRefused else { return }
        accessRefused = refused
        guard bluetoothdUp else { return }
        if refused {
            preKnown.formUnion(knownDevices)
            mirror = Mirror(managedObjects: [:], knownNames: mirror.knownNames)
            emit(.serviceLost)
        } else {
            rebuild(reason: .accessGranted)
        }
    }

    /// bluetoothd is SIGKILLed while links are up and a new one starts, as
    /// measured on 5.66 (docs/real-bluez.md): the kernel keeps the links, so
    /// the new bluetoothd shows those devices `Connected` (services not
    /// resolved) until it drops them (``dropKeptLinks()``); a `Connect` on
    /// such a device is answered only after that, with a new link.
    public func restartBluetoothdKeepingLinks() { restartBluetoothd(keeping: connected) }

    /// The new bluetoothd drops the links the kernel kept (`Connected=false`);
    /// a `Connect` that waited for one makes a new link at once and
    /// replies, all before any client reads the objects again.
    public func dropKeptLinks() {
        for address in keptLinks.sorted() {
            keptLinks.remove(address)
            connected.remove(address)
            change(devicePath(address), BlueZInterface.device, ["Connected": .boolean(false)])
            guard let waiting = heldConnects.removeValue(forKey: address) else { continue }
            linkUp(address)
            for connect in waiting { connect.resume() }
        }
    }

    /// Whether a `Connect` of `address` waits for its kept link to be dropped.
    public func holdsConnect(_ address: BluetoothAddress) -> Bool { heldConnects[address]?.isEmpty == false }

    /// bluetoothd is stopped with SIGTERM and started again: the exiting
    /// daemon powers the adapter off (links drop, `Powered=false` is
    /// signalled), the new one powers it on before any client reads its
    /// objects, so no `Powered=true` change is ever signalled.
    public func restartBluetoothdGracefully() {
        adapterGoingDown = true
        for address in connected.sorted() { linkDown(address) }
        adapterGoingDown = false
        change(adapterPath, BlueZInterface.adapter, ["Powered": .boolean(false), "Discovering": .boolean(false)])
        emit(.adapterPowered(adapterPath, false))
        restartBluetoothd()
    }

    /// The adapter is powered off and on: links drop, discovery ends.
    public func powerCycleAdapter() {
        setAdapterPowered(false)
        setAdapterPowered(true)
    }

    /// The adapter is powered off (links drop, discovery ends) or on (as
    /// BlueZ signals it: `PowerState` first, then `Powered`; discovery
    /// resumes, as the BlueZ layer re-applies it). Off is reported as the
    /// BlueZ layer reports it: at `PowerState` `on-disabling`, before the
    /// links drop, when bluetoothd powers it off; at `Powered` false, after
    /// them, when the kernel does (rfkill: ``setAdapterBlocked(_:)``).
    public func setAdapterPowered(_ on: Bool) {
        guard adapterPresent, mirror.adapter(adapterPath) != nil, on != (mirror.adapter(adapterPath)?.powered ?? false) else { return }
        if on {
            change(adapterPath, BlueZInterface.adapter, ["PowerState": .string("off-enabling")])
            change(adapterPath, BlueZInterface.adapter, ["Powered": .boolean(true), "PowerState": .string("on")])
            emit(.adapterPowered(adapterPath, true))
            if discovery != nil { change(adapterPath, BlueZInterface.adapter, ["Discovering": .boolean(true)]) }
            // Peripherals in range are seen again: discovery, background auto-connect.
            for address in world.keys.sorted() { advertise(address) }
        } else {
            if !adapterBlocked {
                change(adapterPath, BlueZInterface.adapter, ["PowerState": .string("on-disabling")])
                emit(.adapterPowered(adapterPath, false))
            }
            adapterGoingDown = true
            for address in connected.sorted() { linkDown(address) }
            adapterGoingDown = false
            change(adapterPath, BlueZInterface.adapter, [
                "Powered": .boolean(false), "Discovering": .boolean(false), "PowerState": .string(adapterBlocked ? "off-blocked" : "off"),
            ])
            if adapterBlocked { emit(.adapterPowered(adapterPath, false)) }
        }
    }

    /// rfkill blocks the adapter (it goes off, `PowerState` `off-blocked`)
    /// or unblocks it (bluetoothd powers it on again).
    public func setAdapterBlocked(_ blocked: Bool) {
        guard blocked != adapterBlocked else { return }
        adapterBlocked = blocked
        guard mirror.adapter(adapterPath) != nil else { return }
        if blocked {
            if mirror.adapter(adapterPath)?.powered == true {
                setAdapterPowered(false)
            } else {
                change(adapterPath, BlueZInterface.adapter, ["PowerState": .string("off-blocked")])
            }
        } else {
            change(adapterPath, BlueZInterface.adapter, ["PowerState": .string("off")])
            setAdapterPowered(true)
        }
    }

    /// The adapter goes away (unplugged): bluetoothd removes its device
    /// objects and then the adapter object; every link is gone.
    public func removeAdapter() {
        guard adapterPresent else { return }
        adapterPresent = false
        guard mirror.adapter(adapterPath) != nil else { return }
        preKnown.formUnion(knownDevices)
        let links = connected
        connected = []
        for address in world.keys.sorted() where mirror.device(devicePath(address)) != nil {
            removeGatt(address)
            if links.contains(address) { change(devicePath(address), BlueZInterface.device, ["ServicesResolved": .boolean(false), "Connected": .boolean(false)]) }
            apply(InterfacesRemoved: devicePath(address), [BlueZInterface.device])
        }
        discovery = nil
        apply(InterfacesRemoved: adapterPath, [BlueZInterface.adapter])
    }

    /// The adapter is back (plugged in again): bluetoothd adds it powered,
    /// with the devices it had stored.
    public func addAdapter() {
        guard !adapterPresent else { return }
        adapterPresent = true
        guard bluetoothdUp, !accessRefused else { return }
        apply(InterfacesAdded: adapterPath, [BlueZInterface.adapter: adapterProperties()])
        for address in preKnown.sorted() where world[address] != nil { addDevice(address) }
        if mirror.adapter(adapterPath)?.powered == true { emit(.adapterPowered(adapterPath, true)) }
    }
}
