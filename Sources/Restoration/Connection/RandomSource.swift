public import RelinkModel

/// Where backoff jitter comes from; injectable so tests are deterministic.
public protocol RandomSource: Sendable {
    /// A value in `0 ..< 1`.
    mutating func nextUnit() -> Double
}

/// ``SplitMix64``: small, fast and good enough for jitter; seeded for
/// tests, randomly seeded by default.
public struct SplitMixRandom: RandomSource, Hashable {
    private var generator: SplitMix64

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    public init() {
        var system = SystemRandomNumberGenerator()
        generator = SplitMix64(seed: system.next())
    }

    public mutating func nextUnit() -> Double {
        Double(generator.next() >> 11) / Double(UInt64(1) << 53)
    }
}
