import Foundation

/// A fresh directory under the system temp dir, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init(_ label: String = "relink-store") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Removes the directory, first making everything in it writable again.
    func remove() {
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        if let items = FileManager.default.enumerator(atPath: path) {
            for case let item as String in items {
                _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path + "/" + item)
            }
        }
        try? FileManager.default.removeItem(atPath: path)
    }
}
