extension FakeBlueZ {
    /// Holds the next `notifyHosted` call until another one is made (or
    /// 2,000 yields passed: concurrent calls arrive within a few; 100,000
    /// took over 30 s beside the whole suite's processes): a client that hands updates to the bus
    /// concurrently then has them delivered out of order, as a real bus
    /// connection's actor may take them; one that sends them one at a time
    /// is merely slowed.
    public func holdFirstNotification() {
        hosting.notifyCalls = 0
        hosting.holdingFirstNotification = true
    }

    func waitForASecondNotification() async {
        var yields = 0
        while hosting.notifyCalls < 2, yields < 2_000 {
            yields += 1
            await Task.yield()
        }
    }
}
