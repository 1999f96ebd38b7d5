import BlueZ
import DBus
import Logging
import RelinkAPI
import RelinkModel
import Restoration

// `Central1.Unpair` (issue 24; docs/api/Central1.md): a client removes the
// bond with its last use of a peripheral. bluetoothd keeps one bond per
// device for every program, so relinkd removes it only when no identifier
// (the caller's included: `Cancel` first) has a connection intent or a
// subscription on the peripheral.
extension Daemon {
    /// The loop's part of `Unpair`: checks that nobody uses the peripheral
    /// and takes it off the bond watch (relinkd removes this bond itself:
    /// no `bond-removed` event); replies the device's BlueZ object, the
    /// peripheral's UUID and whether bluetoothd has it paired, or nothing
    /// when bluetoothd has no device.
    /// - Throws: `UnknownPeripheral`, `NotPermitted` (an intent or a
    ///   subscription still uses it).
    func unpairTarget(_ id: RestoreIdentifier, _ ref: PeripheralRef) async throws(RelinkError) -> APIResult {
        let peripheral = try knownPeripheral(ref)
        let users = Set(core.machines.keys.filter { $0.peripheral == peripheral }.map(\.identifier))
            .union(core.planner.identifiers(subscribedOn: peripheral))
        if users.contains(id) {
            throw RelinkError(.notPermitted, "\(id) still uses \(ref): Cancel its connection and Unsubscribe first")
        }
        guard users.isEmpty else { throw RelinkError(.notPermitted, "another identifier still uses \(ref): the bond stays") }
        queue(core.handle(.bondForgotten(peripheral)))
        guard let device = await knownDevice(of: peripheral) else { return APIResult() }
        return APIResult(values: [.objectPath(device.path), .string(peripheral.description), .boolean(device.paired || device.bonded)])
    }

    /// `Central1.Unpair`: checked by the loop, then `Adapter1.RemoveDevice`.
    /// A peripheral bluetoothd does not know is success (nothing to remove).
    /// - Throws: as ``unpairTarget(_:_:)``, and `NotReady`, `Failed` from BlueZ.
    nonisolated func unpair(_ id: RestoreIdentifier, _ ref: PeripheralRef, from caller: APICaller) async throws(RelinkError) {
        let values = try await submit(.unpairTarget(id, ref), from: caller).get().values
        guard case .objectPath(let device)? = values.first else { return }
        try await removeBond(id, device, peripheral: values.dropFirst().first.map { "\($0)" } ?? "\(ref)", why: "Unpair")
    }

    /// `Adapter1.RemoveDevice` of a device nobody uses any more (checked by
    /// ``unpairTarget(_:_:)``), journalled `unpaired`; `why` names the call.
    /// A device already gone is success.
    /// - Throws: `NotReady`, `Failed` from BlueZ.
    nonisolated func removeBond(_ id: RestoreIdentifier, _ device: ObjectPath, peripheral: String, why: String) async throws(RelinkError) {
        do {
            try await env.bluez.removeDevice(device, from: env.adapterPath)
        } catch {
            let failure = FailureMapping.failure(error)
            if failure.failureClass == .deviceGone { return }
            throw APIInterfaces.gattError(error, why)
        }
        env.logger.notice("bond removed at the client's request", metadata: .journal([
            .event: "unpaired", .restoreID: "\(id)", .peripheral: "\(peripheral)", .decision: "\(why)",
        ]))
    }
}
