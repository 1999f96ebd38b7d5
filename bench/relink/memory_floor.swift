// The memory floor of a Swift agent built as relinkd is (release, static
// Swift standard library, Foundation, Swift concurrency): what such a
// program has resident before it does anything of its own. Issue 31's
// goal 3 (<= 16 MiB with one identifier) is measured against it.
//
//   swiftc -O -static-stdlib bench/relink/memory_floor.swift -o /tmp/memory-floor
//   swiftc -O -static-stdlib -D ESSENTIALS bench/relink/memory_floor.swift -o /tmp/memory-floor-essentials
//   swiftc -O -static-stdlib -D BARE bench/relink/memory_floor.swift -o /tmp/memory-floor-bare
//
// The first touches what relinkd touches of Foundation, in kind (dates,
// a date formatter, `String(format:)`, UUIDs, JSON, files, the
// environment, a case-insensitive search), and runs a task and an actor
// hop; ESSENTIALS does the same with FoundationEssentials alone (no
// formatter, no ICU); BARE links no Foundation: the standard library,
// Dispatch and concurrency only. Each prints one JSON
// line, {"variant", "rss_kib", "file_kib", "anon_kib"}, from
// /proc/self/status and /proc/self/smaps_rollup (read with the standard
// library and Glibc alone).

import Glibc
import Dispatch
#if ESSENTIALS
import FoundationEssentials
#elseif !BARE
import Foundation
#endif

/// `key:  N kB` lines of a /proc file, as kibibytes by key.
func procKiB(_ path: String) -> [String: Int] {
    guard let file = fopen(path, "r") else { return [:] }
    defer { fclose(file) }
    var result: [String: Int] = [:]
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { continue }
        let number = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        if let number { result[String(parts[0])] = number }
    }
    return result
}

#if !BARE
/// What relinkd touches of Foundation on its way to READY, in kind: dates
/// and their formatting, UUIDs, JSON, URLs and files, a process's
/// environment, a string search.
func touchFoundation() -> Int {
    let now = Date()
    #if ESSENTIALS
    let text = "\(now.timeIntervalSince1970)"
    #else
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
    let text = formatter.string(from: now) + String(format: "%.3f", now.timeIntervalSince1970)
    #endif
    let uuid = UUID().uuidString
    let json = (try? JSONEncoder().encode(["id": uuid, "at": text])) ?? Data()
    let decoded = try? JSONDecoder().decode([String: String].self, from: json)
    let home = ProcessInfo.processInfo.environment["HOME"] ?? "/"
    let exists = FileManager.default.fileExists(atPath: URL(fileURLWithPath: home).appendingPathComponent(".").path)
    #if ESSENTIALS
    let found = text.contains("T")
    #else
    let found = text.range(of: "T", options: .caseInsensitive) != nil
    #endif
    return json.count + (decoded?.count ?? 0) + (exists ? 1 : 0) + (found ? 1 : 0)
}
#endif

#if BARE
let variant = "bare", touched = 0
#elseif ESSENTIALS
let variant = "essentials", touched = touchFoundation()
#else
let variant = "foundation", touched = touchFoundation()
#endif
// Swift concurrency: a task on the global executor and an actor hop.
actor Counter { var n = 0; func add(_ k: Int) -> Int { n += k; return n } }
let counter = Counter()
let done = DispatchSemaphore(value: 0)
Task.detached { _ = await counter.add(touched); done.signal() }
done.wait()
let status = procKiB("/proc/self/status")
let rollup = procKiB("/proc/self/smaps_rollup")
let file = (rollup["Rss"] ?? 0) - (rollup["Anonymous"] ?? 0)
print("{\"variant\": \"\(variant)\", \"rss_kib\": \(status["VmRSS"] ?? 0), \"file_kib\": \(file), \"anon_kib\": \(rollup["Anonymous"] ?? 0)}")
