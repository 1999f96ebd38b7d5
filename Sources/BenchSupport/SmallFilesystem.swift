import Foundation

/// A small tmpfs for full-disk tests: whether this process may mount one
/// (root with CAP_SYS_ADMIN, as on the bench), and mounting and unmounting it.
public enum SmallFilesystem {
    /// Whether this process may mount (root with CAP_SYS_ADMIN).
    public static var mayMount: Bool {
        guard getuid() == 0, let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let caps = UInt64(line.split(separator: "\t").last ?? "", radix: 16) else { return false }
        return caps & (1 << 21) != 0
    }

    /// Mounts a tmpfs of `size` (as `mount -o size=` takes it, e.g. `384k`) at `path`.
    /// - Returns: whether `mount` succeeded.
    public static func mount(size: String, at path: String) throws -> Bool {
        try run(["mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) == 0
    }

    /// Unmounts `path` lazily (files still open stay usable until closed).
    public static func unmount(_ path: String) {
        _ = try? run(["umount", "-l", path])
    }

    private static func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
