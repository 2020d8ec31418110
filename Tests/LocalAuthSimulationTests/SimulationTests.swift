// The deterministic simulator in CI: a fixed set of seeds for a bounded
// number of steps each (LOCALAUTH_SOAK=1: many more), every invariant
// checked after every step (Oracle.swift). A failure names its seed and
// step; `localauth-sim --seed N --steps K --trace` replays it.
import Glibc
import LocalAuthSimulation
import XCTest

final class SimulationTests: XCTestCase {
    var soak: Bool { getenv("LOCALAUTH_SOAK").map { String(cString: $0) == "1" } ?? false }

    func run(seeds: ClosedRange<UInt64>, steps: Int) -> Oracle.Figures {
        var total = Oracle.Figures()
        for seed in seeds {
            let simulation = Simulation(seed: seed)
            let passed = simulation.run(steps: steps)
            total.add(simulation.oracle.figures)
            XCTAssertTrue(passed, "seed \(seed): \(simulation.oracle.violations.first ?? "")\n"
                + simulation.trace.suffix(30).joined(separator: "\n"))
            if !passed { break }
        }
        return total
    }

    func test_S33_S38_S40_S41_S46_givenFixedSeeds_thenNoInvariantBreaksAtAnyStep() {
        let total = soak ? run(seeds: 1...400, steps: 20_000) : run(seeds: 1...64, steps: 5000)
        print(total.summary)
        // The run exercised what it claims to: a vacuous run cannot pass.
        XCTAssertGreaterThan(total.restarts, 0)
        XCTAssertGreaterThan(total.failuresRevealed, 0)
        XCTAssertGreaterThan(total.evaluationsAnswered, 0)
        XCTAssertGreaterThan(total.tornTailsCut, 0)
        XCTAssertGreaterThan(total.refusedWhileFailed, 0)
        for fault in DiskFault.allCases { XCTAssertGreaterThan(total.faults[fault] ?? 0, 0, "\(fault.rawValue) never injected") }
    }

    func test_givenTheSameSeed_thenTheRunIsTheSameStepForStep() {
        let first = Simulation(seed: 7)
        _ = first.run(steps: 1500)
        let second = Simulation(seed: 7)
        _ = second.run(steps: 1500)
        XCTAssertEqual(first.trace, second.trace)
        XCTAssertEqual(first.oracle.figures, second.oracle.figures)
        let other = Simulation(seed: 8)
        _ = other.run(steps: 1500)
        XCTAssertNotEqual(first.trace, other.trace, "the seed must matter")
    }
}
