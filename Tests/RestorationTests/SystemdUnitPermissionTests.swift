import Restoration
import Testing

/// Who may name a systemd unit in a launch spec (docs/relaunch.md#systemd):
/// units are started on the system manager, so root only.
@Suite("Launch permission: systemd units")
struct SystemdUnitPermissionTests {
    @Test func onlyRootMayNameAUnitOfTheSystemManager() {
        #expect(LaunchPermission.decide(unit: "relink-example-lock.service", uid: 0) == .allowed)
        guard case .refused(let why) = LaunchPermission.decide(unit: "relink-example-lock.service", uid: 1000) else {
            Issue.record("a user's spec naming a system unit is refused"); return
        }
        #expect(why.contains("relink-example-lock.service") && why.contains("root"))
    }
}
