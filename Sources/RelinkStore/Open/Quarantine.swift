import Foundation
import Logging

/// Moves a bad database (and its `-wal`/`-shm`) into `<state>/quarantine/`
/// under a UTC timestamped name: `relink-20261122T063000.123Z-corrupt.sqlite`.
///
/// The `-wal` and `-shm` files are moved first: a stray WAL left beside a
/// fresh database could be replayed into it, a stray main file is simply
/// found bad again on the next start.
struct Quarantine {
    let directory: String

    var quarantineDirectory: String { directory + "/quarantine" }

    func moveAside(_ databasePath: String, reason: BadStateReason, now: Date = Date()) throws -> String {
        try FileManager.default.createDirectory(atPath: quarantineDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let target = uniqueTarget(stamp: Self.stamp(now), tag: reason.tag)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: databasePath + suffix) {
            try FileManager.default.moveItem(atPath: databasePath + suffix, toPath: target + suffix)
        }
        try FileManager.default.moveItem(atPath: databasePath, toPath: target)
        return target
    }

    private func uniqueTarget(stamp: String, tag: String) -> String {
        var candidate = "\(quarantineDirectory)/relink-\(stamp)-\(tag).sqlite"
        var counter = 2
        while FileManager.default.fileExists(atPath: candidate) {
            candidate = "\(quarantineDirectory)/relink-\(stamp)-\(tag)-\(counter).sqlite"
            counter += 1
        }
        return candidate
    }

    static func stamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        return formatter.string(from: date)
    }
}
