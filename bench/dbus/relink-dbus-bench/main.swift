// relink's side of the D-Bus benchmark (see bench/dbus/run.sh).
//   relink-dbus-bench serve   ADDRESS NAME READYFILE   answer Ping(s) -> s
//   relink-dbus-bench call    ADDRESS NAME COUNT       sequential Ping calls; prints calls_per_sec
//   relink-dbus-bench receive ADDRESS COUNT READYFILE  count Tick signals; prints signals_per_sec
// With RELINK_BENCH_ON_LOOP=1 the work runs with the connection's executor
// as task executor preference (on its I/O thread), else on the global pool.
import DBus

#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func ready(_ path: String) {
    guard let f = fopen(path, "w") else { return }
    fputs("ready\n", f)
    fclose(f)
}

func fail(_ text: String) -> Never {
    let line = Array((text + "\n").utf8)
    _ = write(2, line, line.count)
    exit(1)
}

let args = CommandLine.arguments
guard args.count == 5, let mode = args.dropFirst().first else { fail("usage: see main.swift") }
let bus = try await Connection.connect(to: .address(args[2]))
let path = try ObjectPath("/bench")

func run() async throws {
switch mode {
case "serve":
    let iface = DBusInterface(
        "org.relink.Bench",
        methods: [DBusMethod("Ping", in: [DBusArgument("s", .string)], out: [DBusArgument("s", .string)]) { call in call.arguments }])
    try bus.export(ExportedObject(path: path, interfaces: [iface]))
    _ = try await bus.requestName(args[3])
    ready(args[4])
    try await bus.serve(handlersOnIOThread: getenv("RELINK_BENCH_ON_LOOP") != nil)
case "call":
    guard let n = Int(args[4]) else { fail("bad count") }
    let t0 = now()
    for _ in 0..<n {
        let reply = try await bus.call(
            destination: args[3], path: path, interface: "org.relink.Bench", method: "Ping", arguments: [.string("hello")])
        guard try reply.decode(String.self) == "hello" else { fail("bad reply") }
    }
    print("calls_per_sec=\(Int(Double(n) / (now() - t0)))")
case "receive":
    guard let n = UInt32(args[3]) else { fail("bad count") }
    let signals = try await bus.signals(matching: SignalMatch(interface: "org.relink.Bench", member: "Tick"))
    ready(args[4])
    var got: UInt32 = 0
    var t0 = 0.0
    for try await m in signals {
        let (seq, _) = try m.decode(UInt32.self, String.self)
        guard seq == got else { fail("out of order: \(seq) at \(got)") }
        if got == 0 { t0 = now() }
        got += 1
        if got == n { break }
    }
    print("signals_per_sec=\(Int(Double(got - 1) / (now() - t0)))")
default:
    fail("unknown mode \(mode)")
}
}

if getenv("RELINK_BENCH_ON_LOOP") != nil {
    try await withTaskExecutorPreference(bus.executor) { try await run() }
} else {
    try await run()
}
