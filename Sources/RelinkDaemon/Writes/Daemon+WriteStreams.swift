import BlueZ
import DBus
import RelinkAPI
import RelinkModel

/// The daemon's write streams and the write limits of connected peripherals.
struct WriteStreamTable: Sendable {
    /// Open streams by object path.
    var streams: [ObjectPath: WriteStream] = [:]
    /// The largest values per write type of each peripheral with a link
    /// and resolved services.
    var limits: [PeripheralID: WriteLimits] = [:]
    /// The next stream's number (its object path).
    var next: UInt64 = 1
    /// The durable transfers under way (relinkd's own chunked writes).
    var transfers = TransferTable()
}

extension Daemon {
    /// Opens (or returns the caller's open) stream of writes without
    /// response on a characteristic `Locate` found on the link. `ready` is
    /// called when a refused write would fit again; by default a
    /// `ReadyToWrite` signal to `owner` (relinkd's own writers, such as a
    /// transfer, pass their own and no owner).
    /// - Throws: `NotSupported` (no `write-without-response`), errors of
    ///   `AcquireWrite` as a write's.
    func openWriteStream(_ id: RestoreIdentifier, key: CharacteristicKey, characteristic path: ObjectPath, owner: String?, uid: UInt32,
                         ready: (@Sendable () -> Void)? = nil) async throws(RelinkError) -> WriteStream {
        let mirror = await bluez.mirror
        guard let c = mirror.characteristic(path), let devicePath = mirror.devicePath(containing: path),
              let device = mirror.device(devicePath), let address = Self.address(of: device), let peripheral = peripheralID(for: address) else {
            throw RelinkError(.notConnected, "the characteristic is no longer on the link")
        }
        guard c.canWriteWithoutResponse else {
            throw RelinkError(.notSupported, "\(key.characteristic) does not take writes without response (its flags: \(c.flags.joined(separator: ", ")))")
        }
        if let open = writeStreams.streams.values.first(where: { $0.identifier == id && $0.key == key && $0.owner == owner && $0.peripheral == peripheral }) {
            return open
        }
        var limits = mirror.writeLimits(of: devicePath)
        var socket: UnixFD?
        var transport: WriteStream.Transport = c.offersAcquireWrite ? .acquired : .writeCommand
        if transport == .acquired {
            do {
                let acquired = try await bluez.acquireWrite(path)
                socket = acquired.socket
                limits = WriteLimits(mtu: acquired.mtu)
            } catch let error as BlueZError where error.name == DBusError.Name.unknownMethod.rawValue {
                // A bluetoothd-alike that shows `WriteAcquired` but has no
                // `AcquireWrite` (BlueZoo): its `WriteValue` commands do.
                logger.notice("no AcquireWrite method: writing commands through WriteValue", metadata: .journal([
                    .peripheral: "\(peripheral)", .characteristic: "\(key.characteristic)", .error: "\(error)"]))
                transport = .writeCommand
            } catch {
                throw APIInterfaces.gattError(error, "AcquireWrite")
            }
        }
        let streamPath = APIPath.writeStream(writeStreams.next)
        writeStreams.next += 1
        let bluez = self.bluez, publisher = self.publisher
        let stream = WriteStream(
            path: streamPath, identifier: id, peripheral: peripheral, key: key, owner: owner, transport: transport,
            limits: limits ?? WriteLimits(mtu: WriteLimits.defaultMTU), socket: socket,
            ready: ready ?? { [weak publisher] in
                guard let owner else { return }
                publisher?.signalWriteStream(streamPath, member: WriteStream1Member.readyToWrite.rawValue, to: owner)
            },
            lost: { [weak self] in Task { await self?.reacquire(streamPath) } },
            sendCommand: { value in try await bluez.write(path, value, withResponse: false) })
        do { try publisher?.exportWriteStream(stream, owner: uid) } catch {
            stream.close()
            throw RelinkError(.failed, "cannot export the write stream: \(error)")
        }
        writeStreams.streams[streamPath] = stream
        logger.info("write stream opened (\(transport.rawValue))", metadata: .journal([
            .restoreID: "\(id)", .peripheral: "\(peripheral)", .characteristic: "\(key.characteristic)"
        ]))
        return stream
    }

    /// Closes a stream (its opener's `Close`, or the opener left the bus).
    func closeWriteStream(_ path: ObjectPath) {
        guard let stream = writeStreams.streams.removeValue(forKey: path) else { return }
        stream.close()
        publisher?.removeWriteStream(path)
    }

    /// Closes every stream a unique name opened (it left the bus).
    func closeWriteStreams(of owner: String) {
        for (path, stream) in writeStreams.streams where stream.owner == owner { closeWriteStream(path) }
    }

    /// A device's `Connected` or `ServicesResolved` changed: its write
    /// limits, and its streams' sockets (bluetoothd closed them at the drop;
    /// new ones are acquired once services are resolved).
    func writeLinkChanged(_ peripheral: PeripheralID, device: Device) async {
        let limits = await bluez.mirror.writeLimits(of: device.path)
        let changed = writeStreams.limits[peripheral] != limits
        writeStreams.limits[peripheral] = limits
        if changed { peripheralChanged(peripheral, device: device) }
        for (path, stream) in writeStreams.streams where stream.peripheral == peripheral {
            if limits == nil { stream.detach() } else if !stream.hasSocket || stream.transport == .writeCommand { await reacquire(path) }
        }
    }

    /// A characteristic appeared on a connected device whose write limits
    /// relinkd does not have yet: real bluetoothd 5.66 may add the
    /// characteristics (which carry the link's `MTU`) after
    /// `ServicesResolved` (docs/real-bluez.md finding 3), and then
    /// `Peripheral1.MTU` and the write sizes stayed 0 until the next change
    /// of the link (seen in CI's real-bluetoothd central test).
    func writeLimitsAppeared(containing path: ObjectPath) async {
        let mirror = await bluez.mirror
        guard let devicePath = mirror.devicePath(containing: path), let device = mirror.device(devicePath), device.connected,
              let address = Self.address(of: device), let peripheral = peripheralID(for: address),
              writeStreams.limits[peripheral] == nil else { return }
        await writeLinkChanged(peripheral, device: device)
    }

    /// Gives a stream a socket (and the link's limits) again.
    func reacquire(_ path: ObjectPath) async {
        guard let stream = writeStreams.streams[path] else { return }
        let mirror = await bluez.mirror
        guard let device = mirror.devices.first(where: { d in Self.address(of: d).flatMap { peripheralID(for: $0) } == stream.peripheral }),
              let c = mirror.characteristic(device: device.path, service: stream.key.service.string, characteristic: stream.key.characteristic.string),
              var limits = mirror.writeLimits(of: device.path) else { return }
        var socket: UnixFD?
        if stream.transport == .acquired {
            guard !stream.hasSocket else { return }
            do {
                let acquired = try await bluez.acquireWrite(c.path)
                socket = acquired.socket
                limits = WriteLimits(mtu: acquired.mtu)
            } catch {
                logger.notice("cannot acquire the write socket again", metadata: .journal([.peripheral: "\(stream.peripheral)", .error: "\(error)"]))
                return
            }
        }
        guard writeStreams.streams[path] === stream else { return }  // closed meanwhile
        stream.attach(limits: limits, socket: socket)
    }

    /// The largest value of a write with or without response to a
    /// peripheral's characteristic on its link now.
    /// - Throws: `ValueTooLong` naming the size.
    func checkWriteLength(_ count: Int, withResponse: Bool, characteristic path: ObjectPath) async throws(RelinkError) {
        let mirror = await bluez.mirror
        let limits = mirror.devicePath(containing: path).flatMap { mirror.writeLimits(of: $0) }
        let largest = limits?.maximum(withResponse: withResponse) ?? WriteLimits.maximumAttributeLength
        guard count <= largest else {
            let why = withResponse ? "the longest attribute value (a long write)" : "ATT MTU \(limits?.mtu ?? 0) - 3"
            throw RelinkError(.valueTooLong, "\(count) bytes: the largest value \(withResponse ? "with" : "without") response on this link is \(largest) bytes (\(why))")
        }
    }

    /// An open stream of the characteristic at `path` (an unstreamed
    /// `Write` without response goes through it: BlueZ refuses `WriteValue`
    /// while its socket is acquired).
    func writeStream(at path: ObjectPath, _ key: CharacteristicKey) async -> WriteStream? {
        guard !writeStreams.streams.isEmpty else { return nil }
        let mirror = await bluez.mirror
        guard let device = mirror.devicePath(containing: path).flatMap({ mirror.device($0) }),
              let peripheral = Self.address(of: device).flatMap({ peripheralID(for: $0) }) else { return nil }
        return writeStreams.streams.values.first { $0.peripheral == peripheral && $0.key == key }
    }
}
