// swift-tools-version: 6.2
import PackageDescription

// Strict package settings, as in Hummingbird: Swift 6 language mode (complete
// concurrency checking) everywhere, and `any` spelled out for existentials.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "relink",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "relinkd", targets: ["relinkd"]),
        .executable(name: "relinkctl", targets: ["relinkctl"]),
        .library(name: "RelinkClient", targets: ["RelinkClient"]),
        .library(name: "DBus", targets: ["DBus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // C libraries: one system library target each, imported by exactly one
        // Swift module that wraps it (DBus, Systemd; SQLite through GRDB).
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        // D-Bus binding over libdbus-1; knows nothing of BlueZ.
        .target(name: "DBus", dependencies: ["CDBus"], swiftSettings: strict),
        // sd_notify and the journald log handler over libsystemd.
        .target(
            name: "Systemd",
            dependencies: [
                "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // Test helper for SystemdTests: logs relink events through the journal
        // handler (beside a private journald), and plays a daemon's sd_notify
        // and watchdog part (with a stall hook on SIGUSR1/SIGUSR2).
        .executableTarget(
            name: "relink-systemd-probe",
            dependencies: [
                "RelinkModel", "Systemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // The restore store: SQLite (WAL) through GRDB on the system SQLite.
        .target(name: "RelinkStore", dependencies: ["RelinkModel", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // Seeded mutation stream and model for the store's crash test (tests and the writer share it).
        .target(name: "RelinkStoreTorture", dependencies: ["RelinkModel", "RelinkStore"], swiftSettings: strict),
        // Crash-test writer, open probe and benchmark for the restore store.
        .executableTarget(
            name: "relink-store-torture",
            dependencies: ["RelinkModel", "RelinkStore", "RelinkStoreTorture", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        // The model: one type per value (identifiers, addresses, UUIDs,
        // intents, names), one parser and one rule each, used by every layer.
        // Imports no C module and no other relink module.
        .target(name: "RelinkModel", dependencies: [], swiftSettings: strict),
        // The API contract: bus and member names, object paths and their
        // escaping, the error enum, the versioned event wire format. relinkd,
        // relinkctl and RelinkClient all use it.
        .target(name: "RelinkAPI", dependencies: ["DBus", "RelinkModel"], swiftSettings: strict),
        // Typed live mirror of org.bluez on top of the D-Bus binding.
        .target(name: "BlueZ", dependencies: ["DBus", "RelinkModel", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // An in-memory bluetoothd behind the BlueZ port, for in-process tests
        // of the daemon (never linked into relinkd).
        .target(name: "BlueZFake", dependencies: ["BlueZ", "DBus", "RelinkModel"], swiftSettings: strict),
        // Restoration core: pure state machines over a Clock. No C imports.
        .target(name: "Restoration", dependencies: ["RelinkModel"], swiftSettings: strict),
        // relinkd's decisions as one value: handle(input) -> [effect], no I/O.
        .target(
            name: "DaemonCore",
            dependencies: ["RelinkModel", "Restoration", .product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: strict),
        // Daemon wiring: services, the actors that carry out the core's actions.
        .target(
            name: "RelinkDaemon",
            dependencies: [
                "DBus", "BlueZ", "DaemonCore", "RelinkAPI", "RelinkModel", "RelinkStore", "Restoration", "Systemd",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "relinkd",
            dependencies: [
                "RelinkDaemon", "DBus", "RelinkAPI", "RelinkModel", "RelinkStore", "Restoration", "Systemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "relinkctl",
            dependencies: ["RelinkClient", "DBus", "RelinkAPI", "RelinkModel", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict),
        // CoreBluetooth-like client library over relinkd's D-Bus API.
        .target(name: "RelinkClient", dependencies: ["DBus", "RelinkAPI", "RelinkModel"], swiftSettings: strict),
        // D-Bus binding benchmark peer (bench/dbus/run.sh builds it in release).
        .executableTarget(name: "relink-dbus-bench", dependencies: ["DBus"], path: "bench/dbus/relink-dbus-bench", swiftSettings: strict),
        // Test support: starts an isolated simulated-Bluetooth bench (bench/).
        .target(name: "BenchSupport", dependencies: [], swiftSettings: strict),

        .testTarget(name: "DBusTests", dependencies: ["DBus", "BenchSupport", "RelinkModel"], swiftSettings: strict),
        .testTarget(
            name: "SystemdTests",
            dependencies: [
                "BenchSupport", "RelinkModel", "Systemd", "relink-systemd-probe",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RelinkStoreTests",
            dependencies: [
                "RelinkModel", "RelinkStore", "RelinkStoreTorture", "BenchSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "RelinkModel", "BenchSupport"], swiftSettings: strict),
        .testTarget(name: "RelinkModelTests", dependencies: ["RelinkModel"], swiftSettings: strict),
        .testTarget(name: "RelinkAPITests", dependencies: ["RelinkAPI", "RelinkModel", "DBus"], swiftSettings: strict),
        .testTarget(name: "RestorationTests", dependencies: ["RelinkModel", "Restoration"], swiftSettings: strict),
        .testTarget(name: "DaemonCoreTests", dependencies: ["DaemonCore", "RelinkModel", "Restoration"], swiftSettings: strict),
        // relinkd run as its own process on the bench, killed with SIGKILL.
        .testTarget(
            name: "RelinkDaemonTests",
            dependencies: ["DBus", "BlueZ", "RelinkAPI", "RelinkModel", "RelinkStore", "Restoration", "RelinkDaemon", "relinkd", "BenchSupport", "Systemd"],
            swiftSettings: strict),
        // The daemon in-process against the fake bluetoothd: unit tier (no bus, no child process).
        .testTarget(
            name: "DaemonInProcessTests",
            dependencies: ["BenchSupport", "BlueZ", "BlueZFake", "DBus", "RelinkAPI", "RelinkDaemon", "RelinkModel", "RelinkStore", "Restoration",
                           .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log"),
                           .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .testTarget(name: "BenchSupportTests", dependencies: ["BenchSupport"], swiftSettings: strict),
        // Pure parts of the client library: paths, arguments, options, decoding.
        .testTarget(name: "RelinkClientTests", dependencies: ["RelinkClient", "DBus", "RelinkAPI", "RelinkModel"], swiftSettings: strict),
        // relinkctl and RelinkCentral against relinkd on the bench (both run as their own processes).
        .testTarget(
            name: "RelinkctlTests",
            dependencies: ["RelinkClient", "DBus", "RelinkAPI", "RelinkModel", "BenchSupport", "relinkctl", "relinkd"],
            swiftSettings: strict),
    ]
)
