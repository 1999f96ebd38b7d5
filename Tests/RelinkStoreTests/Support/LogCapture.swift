import InMemoryLogging
import Logging

/// A logger whose entries the test can read.
struct LogCapture {
    let handler = InMemoryLogHandler()
    var logger: Logger { Logger(label: "relink.store.test") { _ in handler } }
    var entries: [InMemoryLogHandler.Entry] { handler.entries }

    /// Entries at error level or above.
    var loud: [InMemoryLogHandler.Entry] { entries.filter { $0.level >= .error } }
}
