// Test helper for SystemdTests; see JournalScenario and NotifyScenario.
//   relink-systemd-probe journal [auto|journal|stderr] [level] [run-tag]
//   relink-systemd-probe notify
//   relink-systemd-probe ready-after-stopping
import Glibc

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "journal":
    JournalScenario.run(arguments.dropFirst())
case "notify":
    exit(await NotifyScenario.run())
case "ready-after-stopping":
    exit(NotifyScenario.readyAfterStopping())
default:
    NotifyScenario.emit("usage: relink-systemd-probe journal|notify|ready-after-stopping ...")
    exit(2)
}
