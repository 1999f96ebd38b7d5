import Foundation
import Testing

/// scripts/check-units.sh: systemd-analyze verify and security (exposure at
/// most 1.5), sysusers, catalog and D-Bus policy checks, offline.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "no systemd-analyze"))
struct UnitFilesTests {
    static let checkUnits = TestPaths.packageRoot + "/scripts/check-units.sh"
    static let install = TestPaths.packageRoot + "/scripts/install.sh"

    @Test func shippedUnitsPassAndExposureIsAtMostOnePointFive() async throws {
        let result = try await TestPaths.run(Self.checkUnits, [])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let number = try #require(line.firstMatch(of: /: (\d+\.\d)/)?.1)
        let exposure = try #require(Double(String(number)))
        #expect(exposure <= 1.5, "\(line)")
        #expect(result.stdout.contains("ok: systemd-analyze verify relinkd.service"))
        #expect(result.stdout.contains("ok: D-Bus policy loads and denies org.relink"))
    }

    @Test func weakenedUnitFailsTheCheck() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let copy = directory + "/systemd"
            try FileManager.default.copyItem(atPath: TestPaths.packageRoot + "/systemd", toPath: copy)
            let unit = copy + "/relinkd.service"
            let weakened = try String(contentsOfFile: unit, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("Private") && !$0.hasPrefix("Protect") && !$0.hasPrefix("SystemCall") }
                .joined(separator: "\n")
            try weakened.write(toFile: unit, atomically: true, encoding: .utf8)
            let result = try await TestPaths.run(Self.checkUnits, [], environment: ["RELINK_SYSTEMD_DIR": copy])
            #expect(result.status == 1)
            #expect(result.stdout.contains("FAIL: systemd-analyze security relinkd.service"), "\(result.stdout)")
        }
    }

    @Test func installPutsEveryFileInPlaceUnderDestdir() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let bin = directory + "/bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            for name in ["relinkd", "relinkctl"] {
                _ = FileManager.default.createFile(
                    atPath: bin + "/" + name, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
            }
            // Man pages as scripts/manpages.sh writes them (install.sh takes them when there).
            let man = directory + "/man"
            try FileManager.default.createDirectory(atPath: man, withIntermediateDirectories: true)
            for page in ["relinkd.8", "relinkctl.1"] {
                _ = FileManager.default.createFile(atPath: man + "/" + page, contents: Data(".TH X\n".utf8))
            }
            let destdir = directory + "/stage"
            let result = try await TestPaths.run(
                Self.install, ["/opt/relink", destdir, bin], environment: ["RELINK_MAN_DIR": man])
            #expect(result.status == 0, "\(result.stderr)")
            let root = destdir + "/opt/relink"
            for path in [
                "/sbin/relinkd", "/bin/relinkctl", "/lib/systemd/system/relinkd.service",
                "/lib/sysusers.d/relink.conf", "/lib/systemd/catalog/relink.catalog",
                "/share/dbus-1/system.d/org.relink.conf", "/share/dbus-1/system-services/org.relink.service",
                "/share/man/man8/relinkd.8", "/share/man/man1/relinkctl.1",
            ] {
                #expect(FileManager.default.fileExists(atPath: root + path), "\(path) missing")
            }
            let unit = try String(contentsOfFile: root + "/lib/systemd/system/relinkd.service", encoding: .utf8)
            #expect(unit.contains("\nExecStart=/opt/relink/sbin/relinkd\n"))
            // The group drop-in as an example beside the README; relinkd.conf
            // in /etc whatever the prefix (relinkd reads it there).
            #expect(FileManager.default.fileExists(atPath: root + "/share/doc/relink/examples/org.relink-group.conf"))
            let conf = destdir + "/etc/relink/relinkd.conf"
            #expect(FileManager.default.contents(atPath: conf) == FileManager.default.contents(atPath: TestPaths.packageRoot + "/systemd/relinkd.conf"))
            // An operator's relinkd.conf is kept by a later install.
            try "max-identifiers = 7\n".write(toFile: conf, atomically: true, encoding: .utf8)
            let again = try await TestPaths.run(Self.install, ["/opt/relink", destdir, bin], environment: ["RELINK_MAN_DIR": man])
            #expect(again.status == 0 && again.stdout.contains("keeping the existing"), "\(again.stdout)\(again.stderr)")
            #expect(try String(contentsOfFile: conf, encoding: .utf8) == "max-identifiers = 7\n")

            let missing = try await TestPaths.run(Self.install, ["/opt/relink", destdir, directory + "/nothing"])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("not found"))
        }
    }
}
