/// Where backoff jitter comes from; injectable so tests are deterministic.
public protocol RandomSource: Sendable {
    /// A value in `0 ..< 1`.
    mutating func nextUnit() -> Double
}

/// SplitMix64: small, fast and good enough for jitter; seeded for tests,
/// randomly seeded by default.
public struct SplitMixRandom: RandomSource, Hashable {
    private var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    public init() {
        var generator = SystemRandomNumberGenerator()
        self.state = generator.next()
    }

    public mutating func nextUnit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(UInt64(1) << 53)
    }
}
