extension BlueZClient {
    /// Forgets where the hosted applications were registered: bluetoothd
    /// left the bus or another one owns it, and a bluetoothd forgets every
    /// application and advertisement when it exits. Without this the next
    /// ``host(_:adapter:)`` asked the new bluetoothd to unregister what only
    /// the old one had; a new 5.66 whose adapter is not powered yet has no
    /// `LEAdvertisingManager1` and answered `UnknownMethod`, failing the
    /// registration (seen on every bluetoothd SIGTERM restart on the real
    /// bench, docs/real-bluez.md difference 28).
    func forgetHostedRegistrations() {
        for root in hosting.applications.keys { hosting.applications[root]?.adapter = nil }
    }
}
