// PasscodeJobs, every passcode job of the daemon as a value (S-46, S-47):
// what runs, what a result was for, what waits for the passcode store.
import LocalAuthCore
import LocalAuthProtocol
import XCTest
@testable import LocalAuthServer

final class PasscodeJobsTests: XCTestCase {
    private func completion(_ token: UInt64) -> PasscodeWorkers.Completion {
        PasscodeWorkers.Completion(token: token, correct: false, hash: nil, fingerprint: [])
    }

    func test_S41_givenTheLogFailedWhileAJobRan_thenItsResultIsIgnoredAndItsUsersTurnEnds() throws {
        var jobs = PasscodeJobs(workers: 2)
        XCTAssertTrue(jobs.enqueue(.evaluation(uid: 1000, ctx: ContextID(high: 1, low: 1), eval: 1), for: 1000, secret: SecretBytes("1")))
        XCTAssertTrue(jobs.enqueue(.evaluation(uid: 1000, ctx: ContextID(high: 1, low: 1), eval: 2), for: 1000, secret: SecretBytes("2")))
        let (uid, job) = try XCTUnwrap(jobs.next())
        XCTAssertEqual(uid, 1000)
        XCTAssertNil(jobs.next(), "one job per user at a time")
        jobs.started(job)
        jobs.abandonAll()
        XCTAssertEqual(jobs.waitingCount, 0, "the waiting job is dropped")
        XCTAssertNil(jobs.finished(job.token), "its verdict will not be recorded")
        XCTAssertEqual(jobs.runningCount, 0)
        XCTAssertTrue(jobs.enqueue(.evaluation(uid: 1000, ctx: ContextID(high: 1, low: 1), eval: 3), for: 1000, secret: SecretBytes("3")))
        XCTAssertNotNil(jobs.next(), "the user's turn ended")
    }

    func test_S47_givenAFullQueue_thenEnqueueRefuses() {
        var jobs = PasscodeJobs(workers: 1)
        for n in 0..<PasscodeJobs.perUser {
            XCTAssertTrue(jobs.enqueue(.evaluation(uid: 7, ctx: ContextID(high: 0, low: 1), eval: EvaluationID(n)), for: 7, secret: SecretBytes("x")))
        }
        XCTAssertFalse(jobs.hasRoom(for: 7))
        XCTAssertFalse(jobs.enqueue(.evaluation(uid: 7, ctx: ContextID(high: 0, low: 1), eval: 99), for: 7, secret: SecretBytes("x")))
    }

    func test_S36_givenARecordBeingStored_thenResultsWaitAndGoOnWithItsAnswer() throws {
        var jobs = PasscodeJobs(workers: 2)
        let commit = PendingCommit(uid: 1000, set: true, by: 1000, connection: 16, tag: "s", parksConnection: false)
        jobs.commit(commit, after: [completion(5)][...])
        XCTAssertTrue(jobs.isCommitting)
        jobs.wait([completion(6)])
        let (answered, goOn) = try XCTUnwrap(jobs.committed())
        XCTAssertEqual(answered.uid, 1000)
        XCTAssertEqual(goOn?.map(\.token), [5, 6], "in the order they came")
        XCTAssertFalse(jobs.isCommitting)
        // A clear-passcode's answer has nothing to go on with: its connection resumes instead.
        jobs.commit(PendingCommit(uid: 1000, set: false, by: 0, connection: 17, tag: "c", parksConnection: true))
        XCTAssertNil(try XCTUnwrap(jobs.committed()).goOn)
        XCTAssertNil(jobs.committed())
    }
}
