#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starting a detached OS thread, and the monotonic clock the I/O loop uses.
enum IOThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread.
    /// - Throws: ``DBusError`` (`noMemory`) when the thread cannot be created.
    static func spawn(_ body: @escaping @Sendable () -> Void) throws(DBusError) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            guard let arg else { return nil }
            Unmanaged<Box>.fromOpaque(arg).takeRetainedValue().body()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw DBusError(.noMemory, "pthread_create failed: \(rc)")
        }
        pthread_detach(tid)
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    static func nanos(_ d: Duration) -> UInt64 {
        let c = d.components
        if c.seconds < 0 { return 0 }
        if c.seconds > 1_000_000_000 { return UInt64(1_000_000_000) * 1_000_000_000 }
        return UInt64(c.seconds) * 1_000_000_000 + UInt64(c.attoseconds / 1_000_000_000)
    }
}
