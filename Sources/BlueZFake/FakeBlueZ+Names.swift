import BlueZ
import DBus
public import RelinkModel

extension FakeBlueZ {
    /// bluetoothd reports `name` in the device's `Device1.Name` as it is now
    /// (connected or not): real bluetoothd 5.82 once showed a lock's GAP name
    /// while relinkd saw the device disconnected, after a reboot (G14).
    public func reportName(_ address: BluetoothAddress, _ name: String) {
        guard mirror.device(devicePath(address)) != nil else { return }
        change(devicePath(address), BlueZInterface.device, ["Name": .string(name), "Alias": .string(name)])
    }
}
