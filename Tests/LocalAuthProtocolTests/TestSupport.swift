// Shared by the protocol tests: a seeded generator (no clocks, no system
// randomness, so every run sees the same cases) and small conveniences.

@testable import LocalAuthProtocol

/// SplitMix64: deterministic and good enough for test inputs.
struct SeededGenerator: RandomNumberGenerator {
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

extension RequestParseResult {
    var request: Request? {
        if case .request(let r) = self { return r }
        return nil
    }

    var failure: RequestFailure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}

func parseBytes(_ bytes: [UInt8]) -> RequestParseResult { Request.parse(bytes) }
