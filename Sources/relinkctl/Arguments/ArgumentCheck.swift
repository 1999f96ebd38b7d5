import RelinkClient
import Synchronization

/// How commands check their arguments in `validate()`, before relinkd is
/// called: with the client library's checks (the model's parsers and the
/// contract's limits, the rules relinkd applies), which throw
/// `org.relink.Error.InvalidArguments`. relinkctl reports that error like one
/// relinkd replied (exit 1, `relinkctl: <name>: <message>`), also without
/// relinkd.
///
/// ArgumentParser wraps whatever `validate()` throws in a type of its own,
/// so ``run(_:)`` keeps the typed error for ``Relinkctl/main()``.
enum ArgumentCheck {
    /// The error of the check that failed (a command line is parsed once, in `main()`).
    private static let failure = Mutex<RelinkClientError?>(nil)

    /// Runs `checks`; the error they throw is kept (``failed``) and thrown on.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    static func run(_ checks: () throws(RelinkClientError) -> Void) throws(RelinkClientError) {
        do {
            try checks()
        } catch {
            failure.withLock { $0 = error }
            throw error
        }
    }

    /// The error of the check that failed, if one did.
    static var failed: RelinkClientError? { failure.withLock { $0 } }

    /// An `InvalidArguments` error with `message`.
    static func invalid(_ message: String) -> RelinkClientError {
        RelinkClientError(.invalidArguments, message)
    }
}
