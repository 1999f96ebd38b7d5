public import BlueZ
public import DBus
public import RelinkModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes without response through `AcquireWrite`, as bluetoothd gives
/// them (src/gatt-client.c): a `SOCK_SEQPACKET` socket pair, one packet per
/// ATT Write Command, closed on disconnect. The fake's end stands for the
/// peripheral; a test reads what it received with ``takeWrites(_:service:characteristic:)``,
/// and, by not reading, plays a peripheral slower than the writer (the
/// socket fills, and the writer's `send` says `EAGAIN`).
extension FakeBlueZ {
    /// `AcquireWrite`: the central's end of a new socket pair and the link's MTU.
    public func acquireWrite(_ characteristic: ObjectPath) async throws -> AcquiredWrite {
        try requireBluetoothd()
        let (key, path) = try characteristicKey(characteristic)
        guard connected.contains(key.address), let peripheral = world[key.address] else {
            throw BlueZError(name: "org.bluez.Error.Failed", message: "Not connected")
        }
        guard let c = peripheral.services.first(where: { $0.uuid == key.service })?.characteristics.first(where: { $0.uuid == key.characteristic }),
              c.flags.contains("write-without-response"), c.offersAcquireWrite else {
            throw BlueZError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        }
        guard !c.acquireWriteMethodMissing else {
            throw BlueZError(name: DBusError.Name.unknownMethod.rawValue,
                             message: "org.bluez.GattCharacteristic1.AcquireWrite with signature \"a{sv}\" could not be found")
        }
        guard acquiredWrites[key] == nil else { throw BlueZError(name: "org.bluez.Error.NotPermitted", message: "Write acquired") }
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BlueZError(name: "org.bluez.Error.Failed", message: "socketpair: errno \(errno)")
        }
        acquiredWrites[key] = UnixFD(takingOwnershipOf: fds[1])
        change(path, BlueZInterface.gattCharacteristic, ["WriteAcquired": .boolean(true)])
        return AcquiredWrite(socket: UnixFD(takingOwnershipOf: fds[0]), mtu: peripheral.mtu)
    }

    /// The values the peripheral received without response on a
    /// characteristic since the last call (through `WriteValue` "command"
    /// or an acquired socket, which is read now until it is empty), in order.
    public func takeWrites(_ address: BluetoothAddress, service: BluetoothUUID, characteristic: BluetoothUUID) -> [[UInt8]] {
        let key = Key(address: address, service: service, characteristic: characteristic)
        if let fd = acquiredWrites[key] { readPackets(key, fd) }
        defer { receivedWrites[key] = nil }
        return receivedWrites[key] ?? []
    }

    /// Whether the central holds an acquired write socket on the characteristic.
    public func writeAcquired(_ address: BluetoothAddress, service: BluetoothUUID, characteristic: BluetoothUUID) -> Bool {
        acquiredWrites[Key(address: address, service: service, characteristic: characteristic)] != nil
    }

    /// Reads every packet waiting on the peripheral's end; a closed central
    /// end releases the socket (as bluetoothd's hang-up handler does).
    func readPackets(_ key: Key, _ fd: UnixFD) {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                receivedWrites[key, default: []].append(Array(buffer[0..<n]))
                continue
            }
            if n == 0 { release(key) }  // the central closed its end
            return
        }
    }

    /// Closes the acquired sockets of a device (its link went down).
    func releaseWrites(of address: BluetoothAddress) {
        for key in acquiredWrites.keys where key.address == address {
            if let fd = acquiredWrites[key] { readPackets(key, fd) }  // what was sent before the drop arrived
            release(key)
        }
    }

    private func release(_ key: Key) {
        guard acquiredWrites.removeValue(forKey: key) != nil else { return }
        if let path = path(of: key) { change(path, BlueZInterface.gattCharacteristic, ["WriteAcquired": .boolean(false)]) }
    }
}
