// swift-tools-version: 6.2
// The Swift beacon example as a package of its own, depending on relink the
// way a program of yours does: one package dependency, one product.
import PackageDescription

let package = Package(
    name: "relink-beacon-example",
    platforms: [.macOS(.v15)],
    dependencies: [
        // In your package: .package(name: "relink", url: "<your relink clone's URL>", branch: "main").
        // Here, the checkout this example lives in.
        .package(name: "relink", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "relink-beacon",
            dependencies: [.product(name: "RelinkClient", package: "relink")],
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
