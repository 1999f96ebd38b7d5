public import Foundation

/// Executables of this package (relinkd, relinkctl, ...) for tests that
/// run them as their own processes.
public enum BuildProducts {
    /// The executable `name` next to the running test bundle, else in the
    /// checkout's `.build/debug`.
    public static func executable(_ name: String, file: String = #filePath) -> URL {
        let fromBundle = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: fromBundle.path) { return fromBundle }
        let root = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/\(name)")
    }
}
