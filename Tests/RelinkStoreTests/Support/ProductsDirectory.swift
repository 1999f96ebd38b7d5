import Foundation

/// The build products directory: the one holding the running test bundle,
/// where `swift build --build-tests` also puts the package's executables.
enum ProductsDirectory {
    static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // Inside a bundle directory (`*.xctest/...`) step out of it.
        while url.path.contains(".xctest") { url = url.deletingLastPathComponent() }
        return url.path
    }

    /// Full path of an executable product, or nil when it was not built.
    static func executable(_ name: String) -> String? {
        let candidate = path + "/" + name
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }
}
