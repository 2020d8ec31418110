// The knobs of the long randomized runs: LOCALAUTH_SOAK=1 for soak lengths,
// integers from the environment (cycles, seed), and a seeded PRNG so that a
// failing cycle can be replayed from its seed.
import Foundation
import LocalAuthTestSupport

extension Harness {
    static var soak: Bool { ProcessInfo.processInfo.environment["LOCALAUTH_SOAK"] == "1" }

    static func environmentInt(_ name: String) -> Int? {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }
    }
}

/// A small deterministic PRNG (SplitMix64), so a failing cycle can be replayed from its seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
