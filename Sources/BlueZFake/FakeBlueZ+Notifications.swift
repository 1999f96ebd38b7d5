public import BlueZ
public import RelinkModel

extension FakeBlueZ {
    /// The peripheral refuses (nil: accepts again) the CCC descriptor
    /// write that enables the characteristic's notifications: its
    /// `StartNotify` on a live link fails with `error`, as bluetoothd
    /// answers with the peripheral's ATT error.
    public func refuseNotifications(_ address: BluetoothAddress, service: BluetoothUUID, characteristic: BluetoothUUID, with error: BlueZError?) {
        notifyRefusals[Key(address: address, service: service, characteristic: characteristic)] = error
    }

    /// Holds the next `notifyHosted` call until another one is made (or
    /// 50 yields passed: concurrent calls arrive within a few; in the whole
    /// suite, where hundreds of tasks share two threads, 2,000 yields took
    /// over 30 s): a client that hands updates to the bus
    /// concurrently then has them delivered out of order, as a real bus
    /// connection's actor may take them; one that sends them one at a time
    /// is merely slowed.
    public func holdFirstNotification() {
        hosting.notifyCalls = 0
        hosting.holdingFirstNotification = true
    }

    func waitForASecondNotification() async {
        var yields = 0
        while hosting.notifyCalls < 2, yields < 50 {
            yields += 1
            await Task.yield()
        }
    }
}
