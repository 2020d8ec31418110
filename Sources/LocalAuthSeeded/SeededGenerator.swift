// The one seeded generator (SplitMix64) of the simulator and the test suites:
// no clock and no system randomness. Every choice a simulation run makes
// (which client acts, which fault, how many bytes of an unsynced write
// survive a crash) and every generated test case comes from here, so one
// seed is one run, byte for byte, on any machine, and a failure is replayed
// from its seed. A leaf module: both the simulator (Sources) and the test
// support (Tests) use it, and neither depends on the other.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<bound (bound > 0), without Swift's `random(in:)` (whose algorithm
    /// is the standard library's to change).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    /// True with probability `percent`/100.
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    public mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }
}
