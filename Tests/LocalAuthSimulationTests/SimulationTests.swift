// The deterministic simulator in CI: a fixed set of seeds for a bounded
// number of steps each (LOCALAUTH_SOAK=1: many more), every invariant
// checked after every step (Oracle.swift), run by the `localauth-sim`
// executable, so that a failing seed replays byte for byte from the command
// it prints: the executable runs with deterministic hashing, and the server
// core walks some dictionaries (its connections) in hash order, which Swift
// otherwise seeds per process and per dictionary — two runs of one seed in
// this test process would differ. A failure names its seed and step;
// `localauth-sim --seed N --steps K --trace` replays it.
import Glibc
import LocalAuthTestSupport
@testable import LocalAuthSimulation
import XCTest

final class SimulationTests: XCTestCase {
    var soak: Bool { getenv("LOCALAUTH_SOAK").map { String(cString: $0) == "1" } ?? false }

    /// Runs the executable; its figures (`Figures.record`) by name.
    func simulate(_ arguments: [String], timeout: Double = 600) throws -> (code: Int32, output: String, figures: [String: Int]) {
        let (code, output, _) = try runToCompletion(try Binary.find("localauth-sim"), arguments, timeout: timeout)
        var figures: [String: Int] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("figures ") {
            for pair in line.dropFirst(8).split(separator: " ") {
                let parts = pair.split(separator: "=")
                if parts.count == 2, let value = Int(parts[1]) { figures[String(parts[0])] = value }
            }
        }
        return (code, output, figures)
    }

    func test_S33_S38_S40_S41_S46_givenFixedSeeds_thenNoInvariantBreaksAtAnyStep() throws {
        let arguments = soak ? ["--seed", "1", "--seeds", "400", "--steps", "20000"]
                             : ["--seed", "1", "--seeds", "64", "--steps", "5000"]
        let run = try simulate(arguments + ["--trace"], timeout: soak ? 7200 : 600)
        print(run.output)
        XCTAssertEqual(run.code, 0, run.output)
        // The run exercised what it claims to: a vacuous run cannot pass.
        for figure in ["restarts", "reopens", "clean-stops", "failures-revealed", "evaluations-answered",
                       "can-evaluates", "torn-tails", "refused-while-failed", "log-failures", "hostile-lines",
                       "trail-entries", "check-runs", "passcode-jobs", "short-writes", "split-reads",
                       "space-changes", "reserve-refusals", "watch-states", "combined-prompts", "passcode-halves-ended",
                       "routed-evaluations", "agent-prompts", "agents-gone", "app-answers-refused",
                       "snapshots-written", "starts-from-snapshot", "refused-starts", "repairs"] {
            XCTAssertGreaterThan(run.figures[figure] ?? 0, 0, figure)
        }
        for fault in DiskFault.allCases {
            XCTAssertGreaterThan(run.figures["fault-" + fault.key] ?? 0, 0, "\(fault.rawValue) never injected")
        }
    }

    func test_givenTheSameSeed_thenTwoProcessesRunItByteForByte() throws {
        let first = try simulate(["--seed", "7", "--steps", "1500", "--dump"])
        let second = try simulate(["--seed", "7", "--steps", "1500", "--dump"])
        XCTAssertEqual(first.code, 0)
        XCTAssertGreaterThan(first.output.count, 10_000, "the dump holds every step")
        XCTAssertEqual(first.output, second.output)
        let other = try simulate(["--seed", "8", "--steps", "1500", "--dump"])
        XCTAssertNotEqual(first.output, other.output, "the seed must matter")
    }

    // MARK: - The S-40 oracle can fail

    func test_S40_givenOutputProducedAfterAnUndurableFailure_whenItLeaves_thenTheMarksNameTheFailure() {
        var marks = RevealMarks()
        marks.failureRecorded(seq: 9, produced: 100)
        // Bytes produced before the failure may leave at once.
        XCTAssertNil(marks.performed(0..<100, durable: 8).violation)
        XCTAssertEqual(marks.performed(100..<101, durable: 8).violation, 9)
    }

    func test_S40_givenTheFailureDurable_whenTheOutputAfterItLeaves_thenItIsRevealedNotViolated() {
        var marks = RevealMarks()
        marks.failureRecorded(seq: 9, produced: 100)
        let judged = marks.performed(90..<140, durable: 9)
        XCTAssertNil(judged.violation)
        XCTAssertEqual(judged.revealed, 1)
        XCTAssertEqual(judged.newest, 9)
        XCTAssertTrue(marks.isEmpty)
    }

    func test_S40_S41_givenTheLogFailedBeforeTheFailureWasDurable_thenWhatWasAdmittedAfterItNeverLeaves() {
        var marks = RevealMarks()
        marks.failureRecorded(seq: 9, produced: 100)
        // 120 bytes admitted when the log failed: 100..<120 came after the failure.
        marks.logFailed(admitted: 120, durable: 8)
        XCTAssertNil(marks.performed(0..<100, durable: 8).violation)
        XCTAssertEqual(marks.performed(110..<111, durable: 8).violation, 9)
        // What the daemon produces after the failure (its `unavailable` answers) carries no verdict.
        XCTAssertNil(marks.performed(120..<400, durable: 8).violation)
    }

    func test_S40_givenUnsentOutputDropped_thenTheMarkMovesToWhereNewOutputStarts() {
        var marks = RevealMarks()
        marks.failureRecorded(seq: 9, produced: 500)
        // MaxPendingBytes: 400 unsent bytes dropped; new bytes start at 100, after the failure.
        marks.dropped(to: 100)
        XCTAssertEqual(marks.performed(100..<101, durable: 8).violation, 9)
    }
}
