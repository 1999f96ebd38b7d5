import Foundation
import RelinkAPI
import RelinkModel
@testable import RelinkDaemon
import Restoration
import Synchronization
import Testing

/// A runner that records the commands and answers as told.
final class ScriptedUserCommands: UserCommandRunner {
    private let state: Mutex<(commands: [UserCommand], answer: UserCommandResult)>

    init(_ answer: UserCommandResult) { state = Mutex(([], answer)) }

    var commands: [UserCommand] { state.withLock { $0.commands } }

    func run(_ command: UserCommand) async -> UserCommandResult {
        state.withLock { $0.commands.append(command); return $0.answer }
    }
}

/// A user's unit is started on the user's own manager by `systemctl
/// --user` run as that user (docs/relaunch.md#systemd): the command relinkd
/// runs, and how systemctl's exit statuses, stderr and a timeout map to
/// the typed errors and start outcomes.
@Suite("Launch: a user's unit on their own manager")
struct UserUnitStarterTests {
    static let unit = "lock.service"
    static let notRunning = "Failed to connect to bus: No such file or directory"

    func starter(_ answer: UserCommandResult) -> (UserUnitStarter, ScriptedUserCommands) {
        let runner = ScriptedUserCommands(answer)
        return (UserUnitStarter(runner: runner, runtimeDirectoryPattern: "/tmp/users/%U/run"), runner)
    }

    @Test func systemctlRunsAsTheUserWithTheirRuntimeDirectoryAndTheUnitAsOneArgument() async throws {
        let (s, runner) = starter(.exited(0, stdout: "", stderr: ""))
        #expect(await s.start(Self.unit, uid: 1000, gid: 100) == .started)
        let command = try #require(runner.commands.first)
        #expect(command.uid == 1000 && command.gid == 100)
        #expect(command.arguments == ["systemctl", "--user", "start", "--", Self.unit])
        #expect(command.environment["XDG_RUNTIME_DIR"] == "/tmp/users/1000/run")
        #expect(command.environment["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=/tmp/users/1000/run/bus")
    }

    @Test func aNameThatIsNoUnitIsNeverHandedToSystemctl() async {
        let (s, runner) = starter(.exited(0, stdout: "", stderr: ""))
        guard case .failed = await s.start("x; rm -rf /", uid: 1000, gid: 100) else { Issue.record("started"); return }
        await #expect(throws: RelinkError.self) { try await s.check("../other", uid: 1000, gid: 100) }
        #expect(runner.commands.isEmpty)
    }

    @Test func startFailuresNameTheUserTheUnitAndTheTypedError() async {
        let cases: [(UserCommandResult, String)] = [
            (.exited(5, stdout: "", stderr: "Failed to start lock.service: Unit lock.service not found.\n"), RelinkErrorName.notActivatable.rawValue),
            (.exited(1, stdout: "", stderr: Self.notRunning), RelinkErrorName.notReady.rawValue),
            (.exited(1, stdout: "", stderr: "Job for lock.service failed because the control process exited with error code."), "exited 1"),
            (.timedOut, "did not finish in time"),
            (.notRun("no setpriv"), "no setpriv"),
        ]
        for (answer, expected) in cases {
            let (s, _) = starter(answer)
            guard case .failed(let why) = await s.start(Self.unit, uid: 1000, gid: 100) else { Issue.record("\(answer) started"); continue }
            #expect(why.contains(expected) && why.contains("uid 1000") && why.contains(Self.unit), "\(answer): \(why)")
        }
    }

    @Test func checkAsksTheUsersManagerForTheUnitsLoadState() async throws {
        let (loaded, runner) = starter(.exited(0, stdout: "loaded\n", stderr: ""))
        try await loaded.check(Self.unit, uid: 1000, gid: 100)
        #expect(runner.commands.first?.arguments == ["systemctl", "--user", "show", "--property=LoadState", "--value", "--", Self.unit])

        let (unknown, _) = starter(.exited(0, stdout: "not-found\n", stderr: ""))
        let notFound = await #expect(throws: RelinkError.self) { try await unknown.check(Self.unit, uid: 1000, gid: 100) }
        #expect(notFound?.code == .notActivatable && notFound?.message.contains("not-found") == true)

        let (stopped, _) = starter(.exited(1, stdout: "", stderr: Self.notRunning))
        let notReady = await #expect(throws: RelinkError.self) { try await stopped.check(Self.unit, uid: 1000, gid: 100) }
        #expect(notReady?.code == .notReady && notReady?.message.contains("uid 1000") == true)

        let (slow, _) = starter(.timedOut)
        let timedOut = await #expect(throws: RelinkError.self) { try await slow.check(Self.unit, uid: 1000, gid: 100) }
        #expect(timedOut?.code == .failed)
    }

    /// The production runner with real processes (as the test's own user):
    /// an exit status comes back, and a command past its timeout is killed.
    /// setpriv's `--init-groups` needs root, as relinkd has.
    @Test(.enabled(if: getuid() == 0, "needs root (setpriv --init-groups)")) func setprivRunnerReportsTheStatusAndKillsACommandPastItsTimeout() async throws {
        let uid = getuid(), gid = getgid()
        try #require(SetprivRunner.find("setpriv") != nil && SetprivRunner.find("timeout") != nil, "needs setpriv and timeout")
        let runner = SetprivRunner()
        let failed = await runner.run(UserCommand(uid: uid, gid: gid, arguments: ["sh", "-c", "echo out; echo err >&2; exit 3"],
                                                  environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(30)))
        #expect(failed == .exited(3, stdout: "out\n", stderr: "err\n"))
        let slow = await runner.run(UserCommand(uid: uid, gid: gid, arguments: ["sleep", "60"], environment: [:], timeout: .seconds(1)))
        #expect(slow == .timedOut)
    }
}
