import BlueZ

/// BlueZ's discovery filter (what `SetDiscoveryFilter` takes).
typealias BlueZDiscoveryFilter = DiscoveryFilter
