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

