// Clock changes (issue 8 item 5, S-8): moving the wall clock back never
// shortens a passcode delay. Once with a mocked clock in the core (event
// times going backwards), once with the real daemon restarted under
// libfaketime (LD_PRELOAD, FAKETIME="-2h": its wall clock two hours behind).
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class ClockTests: ReliabilityTestCase {
    static let faketimeLibraries = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                                    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                                    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"]

    func testMockedClockGoingBackNeverShortensADelay() {
        var rules = Rules.default
        rules.delayAfterFailures = 1
        rules.backoff = [2 * Timestamp.second, 3600 * Timestamp.second]
        let t0: Int64 = 1_780_000_000 * Timestamp.second
        var state = AuthState()
        state.apply(Event(time: t0, .rulesApplied(rules)))
        state.apply(Event(time: t0, .passcodeChanged(uid: 7, set: true, by: 0)))
        state.apply(Event(time: t0, .passcodeRejected(uid: 7, ctx: nil, eval: nil, counted: true)))
        XCTAssertEqual(state.passcodeRetryAfter(7, now: t0), 2)
        // The clock jumps back two hours: the delay is judged against the newest event time.
        XCTAssertEqual(state.passcodeRetryAfter(7, now: t0 - 7200 * Timestamp.second), 2)
        // Later (real) events move the high-water mark past the delay.
        state.apply(Event(time: t0 + 5 * Timestamp.second, .deviceUnlocked(uid: 7, by: 0)))
        XCTAssertEqual(state.passcodeRetryAfter(7, now: t0 + 5 * Timestamp.second), 0)
        // A failure stamped with the backward clock: its delay starts at the high-water mark.
        let back = t0 - 7200 * Timestamp.second
        state.apply(Event(time: back, .passcodeRejected(uid: 7, ctx: nil, eval: nil, counted: true)))
        XCTAssertGreaterThanOrEqual(state.passcodeRetryAfter(7, now: back), 3600, "a failure under a backward clock got a shorter delay")
        XCTAssertGreaterThanOrEqual(state.passcodeRetryAfter(7, now: t0 + 5 * Timestamp.second), 3600)
        // The snapshot codec keeps the high-water mark.
        XCTAssertEqual(try StateCodec.decode(StateCodec.encode(state)).passcodeRetryAfter(7, now: back), state.passcodeRetryAfter(7, now: back))
    }

    func testDaemonRestartedWithItsClockTwoHoursBackKeepsTheDelay() throws {
        guard let library = Self.faketimeLibraries.first(where: { access($0, R_OK) == 0 }) else {
            throw XCTSkip("libfaketime is not installed (apt-get install faketime)")
        }
        let daemon = try startDaemon(configuration: configuration(passcode: ["DelayAfterFailures=1", "BackoffSec=2 3600"]))
        let admin = try daemon.connect()
        let passcode = Secrets.make("Cl0ckPass")
        try prepareUser(admin, uid: 0, passcode: passcode, enroll: false)
        let wrong = [Secrets.make("Wr0ngClock1"), Secrets.make("Wr0ngClock2")]

        func failOnce(_ client: Client, _ secret: String) throws -> Response {
            let ctx = try newContext(client)
            let evalTag = tag("ev")
            try client.send("\(evalTag) evaluate ctx=\(ctx) policy=owner reason=clock")
            let prompt = try client.next(tag: evalTag)
            guard prompt["kind"] == "passcode" else { return prompt }
            XCTAssertOK(try client.request("\(tag("p")) passcode ctx=\(ctx) secret=\(secret)"))
            return try client.next(tag: evalTag)
        }

        // 1. A failure at the real time starts a 2 s delay.
        let first = try failOnce(admin, wrong[0])
        XCTAssertEqual(first.errorName, "authenticationFailed", "\(first)")
        XCTAssertEqual(first["retry-after"], "2")
        // Wait it out at the real time, then record an event after it (the high-water mark).
        XCTAssertTrue(try waitUntil { try status(admin, uid: 0)["retry-after"] == "0" })
        _ = try newContext(admin)
        admin.shutDown()
        daemon.stop()

        // 2. Restart with the wall clock two hours back.
        daemon.environment = ["LD_PRELOAD": library, "FAKETIME": "-2h", "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                              "FAKETIME_NO_CACHE": "1"]
        try daemon.start()
        let faked = try daemon.connect()
        // The daemon really runs two hours behind: its daemon-started event says so.
        let log = try LogContents(stateDirectory: daemon.stateDirectory)
        let started = log.events.last { $0.body.kind == .daemonStarted }
        let realNow = Int64(Date().timeIntervalSince1970 * 1_000_000)
        XCTAssertLessThan(started?.time ?? realNow, realNow - 3600 * 1_000_000, "libfaketime did not move the daemon's clock")
        // 3. A failure under the backward clock gets the full next delay (3600 s), not 3600 s minus two hours.
        let second = try failOnce(faked, wrong[1])
        XCTAssertEqual(second.errorName, "authenticationFailed", "\(second)")
        let retryAfter = Int(second["retry-after"] ?? "") ?? 0
        XCTAssertGreaterThanOrEqual(retryAfter, 3590, "the delay was shortened by the backward clock: \(second)")
        let shown = Int(try status(faked, uid: 0)["retry-after"] ?? "") ?? 0
        XCTAssertGreaterThanOrEqual(shown, 3590)
        // Another evaluation is refused at once with the delay.
        let third = try failOnce(faked, wrong[0])
        XCTAssertEqual(third.errorName, "authenticationFailed")
        XCTAssertGreaterThanOrEqual(Int(third["retry-after"] ?? "") ?? 0, 3590, "\(third)")
        faked.shutDown()

        // 4. Back to the real clock: still the same delay, not shortened.
        daemon.stop()
        daemon.environment = [:]
        try daemon.start()
        let real = try daemon.connect()
        XCTAssertGreaterThanOrEqual(Int(try status(real, uid: 0)["retry-after"] ?? "") ?? 0, 3590)
    }

    /// Issue 15 item 10: a delay begun while the wall clock was a day ahead
    /// must end after its length once the clock is corrected, not a day
    /// later. libfaketime re-reads its offset from a file on every call, so
    /// the running daemon's clock is moved back without a restart; its
    /// boot-time clock is left real (FAKETIME_DONT_FAKE_MONOTONIC).
    func testADelayBegunWithTheClockADayAheadLastsItsLengthAfterTheCorrection() throws {
        guard let library = Self.faketimeLibraries.first(where: { access($0, R_OK) == 0 }) else {
            throw XCTSkip("libfaketime is not installed (apt-get install faketime)")
        }
        let offsets = TemporaryDirectory()
        let offsetFile = offsets.path + "/faketime"
        try "+1d\n".write(toFile: offsetFile, atomically: true, encoding: .utf8)
        chmod(offsets.path, 0o755)
        chmod(offsetFile, 0o644)
        let daemon = try startDaemon(
            configuration: configuration(passcode: ["DelayAfterFailures=1", "BackoffSec=3"]),
            environment: ["LD_PRELOAD": library, "FAKETIME_TIMESTAMP_FILE": offsetFile, "FAKETIME_NO_CACHE": "1",
                          "FAKETIME_DONT_FAKE_MONOTONIC": "1"])
        let admin = try daemon.connect()
        try prepareUser(admin, uid: 0, passcode: Secrets.make("D4yAhead"), enroll: false)
        let ctx = try newContext(admin)
        try admin.send("ev evaluate ctx=\(ctx) policy=owner reason=clock")
        XCTAssertEqual(try admin.next(tag: "ev")["kind"], "passcode")
        XCTAssertOK(try admin.request("p1 passcode ctx=\(ctx) secret=\(Secrets.make("Wr0ngAhead"))"))
        let failed = try admin.next(tag: "ev")
        XCTAssertEqual(failed["retry-after"], "3", "\(failed)")
        let log = try LogContents(stateDirectory: daemon.stateDirectory)
        let realNow = Int64(Date().timeIntervalSince1970 * 1_000_000)
        XCTAssertGreaterThan(log.events.last?.time ?? 0, realNow + 23 * 3600 * 1_000_000, "libfaketime did not move the clock ahead")
        // The clock is corrected: back a day, while the daemon runs.
        try "+0d\n".write(toFile: offsetFile, atomically: true, encoding: .utf8)
        chmod(offsetFile, 0o644)
        // Observable, not timed: poll (safety net 30 s) until the delay is over.
        XCTAssertTrue(try waitUntil(safetyNet: 30) { try status(admin, uid: 0)["retry-after"] == "0" },
                      "the 3 s delay froze after the clock was set back a day")
    }
}
