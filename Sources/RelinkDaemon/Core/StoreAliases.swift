import RelinkStore

// The store and the restoration core both define `RestoreIdentifier`,
// `BluetoothUUID`, `Subscription` and `ScanIntent`. This file imports only
// the store, so these names are unambiguous here; the rest of the module
// uses the aliases.

/// The store's restore identifier.
typealias StoreIdentifier = RestoreIdentifier
/// The store's Bluetooth UUID (canonical text).
typealias StoreUUID = BluetoothUUID
/// The store's subscription row.
typealias StoreSubscription = Subscription
/// The store's scan intent row.
typealias StoreScanIntent = ScanIntent
