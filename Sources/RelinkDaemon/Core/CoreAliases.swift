import Restoration

// See StoreAliases.swift: the restoration core's names, unambiguous here.

/// The core's restore identifier.
typealias CoreIdentifier = RestoreIdentifier
/// The core's Bluetooth UUID.
typealias CoreUUID = BluetoothUUID
/// The core's subscription.
typealias CoreSubscription = Subscription
/// The core's scan intent.
typealias CoreScanIntent = ScanIntent
/// The core's merged discovery filter.
typealias CoreDiscoveryFilter = DiscoveryFilter
/// A connection state machine on the daemon's clock.
typealias Machine = ConnectionStateMachine<ContinuousClock>
