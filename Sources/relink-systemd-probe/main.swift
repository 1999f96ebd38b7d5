// Test helper for SystemdTests; see JournalScenario and NotifyScenario.
//   relink-systemd-probe journal [auto|journal|stderr] [level] [run-tag]
//   relink-systemd-probe notify
import Glibc

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "journal":
    JournalScenario.run(arguments.dropFirst())
case "notify":
    exit(await NotifyScenario.run())
default:
    NotifyScenario.emit("usage: relink-systemd-probe journal|notify ...")
    exit(2)
}
