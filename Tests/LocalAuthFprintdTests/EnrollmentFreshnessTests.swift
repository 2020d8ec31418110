// S-43 "the daemon notices enrollment changes made with fprintd's own tools
// (at the latest at the user's next can-evaluate or evaluate)", against the
// real fprintd (FprintdStack): the very next check after fprintd-enroll or
// fprintd-delete answers from the new set, with no polling; a check that
// waits for fprintd keeps its connection's replies in order; and a fprintd
// that hangs (SIGSTOP) delays only the checks waiting for it, which the
// D-Bus call timeout answers with biometryNotAvailable.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

extension FprintdBackendTests {
    func test_S43_aFingerEnrolledWithFprintdShowsAtTheVeryNextCanEvaluate_recordedBeforeTheCheck() throws {
        let stack = try FprintdStack()
        let daemon = try daemon(stack)
        let client = try daemon.connect()
        XCTAssertOK(try client.request("p set-passcode secret=1234"))
        let ctx = try newContext(client)
        // The first check already waits for fprintd's answer: none enrolled.
        XCTAssertLAError(try client.request("c1 can-evaluate ctx=\(ctx) policy=biometrics"), -7, "biometryNotEnrolled")
        try stack.enroll("root", finger: "right-index-finger", id: enrolledPrint)
        // The very next check, with the context made before the enrollment.
        let next = try client.request("c2 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertOK(next)
        XCTAssertTrue(isHexToken(next["domain-state"]), "\(next)")
        XCTAssertEqual(try status(client)["enrolled"], "1")
        XCTAssertEqual(daemon.stop(), 0)

        // The log: the change is recorded between the two checks, before the one it answered.
        let log = try runToCompletion(try Binary.find("localauthctl"), ["log", "-D", daemon.stateDirectory, "-o", "json"])
        let lines = log.1.split(separator: "\n")
        let checks = lines.indices.filter { lines[$0].contains("\"policy-checked\"") }
        let changes = lines.indices.filter { lines[$0].contains("\"enrollment-changed\"") }
        XCTAssertEqual(checks.count, 2, log.1)
        XCTAssertEqual(changes.count, 1, log.1)
        if checks.count == 2, let change = changes.first {
            XCTAssertTrue(checks[0] < change && change < checks[1], log.1)
            XCTAssertTrue(lines[change].contains("\"fingers\":[\"right-index-finger\"]"), log.1)
        }
    }

    func test_S43_fingersDeletedWithFprintdMakeTheVeryNextEvaluateBiometryNotEnrolled() throws {
        let (stack, daemon, client, ctx) = try ready()
        defer { withExtendedLifetime(daemon) {} }
        try stack.delete("root")
        client.timeout = 20
        try client.send("e evaluate ctx=\(ctx) policy=biometrics reason=\"Unlock the vault\"")
        XCTAssertLAError(try client.next(tag: "e"), -7, "biometryNotEnrolled")
        XCTAssertEqual(try status(client)["enrolled"], "0")
        XCTAssertEqual(daemon.stop(), 0)
        // The evaluation never started on the old set: every event of it
        // comes after the change (fprintd-delete) was recorded.
        let log = try runToCompletion(try Binary.find("localauthctl"), ["log", "-D", daemon.stateDirectory, "-o", "json"])
        let lines = log.1.split(separator: "\n")
        let change = lines.lastIndex { $0.contains("\"enrollment-changed\"") && $0.contains("\"fingers\":[]") }
        let evaluation = lines.indices.filter { lines[$0].contains("\"evaluation-") || lines[$0].contains("\"prompt-shown\"") }
        XCTAssertNotNil(change, log.1)
        XCTAssertFalse(evaluation.isEmpty, log.1)
        if let change { XCTAssertTrue(evaluation.allSatisfy { $0 > change }, log.1) }
    }

    func test_S43_pipelinedLinesBehindAWaitingCheckKeepTheirOrderAndOneAnswerServesThem() throws {
        let (stack, daemon, client, ctx) = try ready()
        defer { withExtendedLifetime(daemon) {} }
        let before = try client.request("c0 can-evaluate ctx=\(ctx) policy=biometrics")["domain-state"]
        try stack.enroll("root", finger: "left-thumb", id: "print-thumb")
        // One write: the first check waits for fprintd; the lines behind it
        // (one needing no fingers, one more check, a ping) wait with it.
        let ctxArgument = "ctx=\(ctx)"
        try client.sendRaw(Array(("c1 can-evaluate \(ctxArgument) policy=biometrics\ng get \(ctxArgument)\n"
            + "c2 can-evaluate \(ctxArgument) policy=owner\npi ping\nc3 can-evaluate \(ctxArgument) policy=biometrics\n").utf8))
        var replies: [Response] = []
        for _ in 0..<5 { replies.append(try client.next()) }
        XCTAssertEqual(replies.map(\.tag), ["c1", "g", "c2", "pi", "c3"], "\(replies)")
        XCTAssertOK(replies[0])
        XCTAssertNotEqual(replies[0]["domain-state"], before, "the first check saw the new finger")
        XCTAssertEqual(replies[4]["domain-state"], replies[0]["domain-state"])
        XCTAssertEqual(try status(client)["enrolled"], "2")
    }

    func test_S43_aHungFprintdDelaysOnlyTheChecksWaitingForItAndTheCallTimeoutAnswersThem() throws {
        let (stack, daemon, first, ctx) = try ready()
        defer { withExtendedLifetime(daemon) {} }
        let other = try daemon.connect()
        let otherCtx = try newContext(other)
        // fprintd stops answering (it keeps its bus name: calls just hang).
        XCTAssertEqual(Glibc.kill(stack.fprintdPID, SIGSTOP), 0)
        defer { Glibc.kill(stack.fprintdPID, SIGCONT) }
        first.timeout = 30
        other.timeout = 30
        try first.sendRaw(Array("c can-evaluate ctx=\(ctx) policy=biometrics\np ping\n".utf8))
        // Another connection's check of the same user joins the same query.
        try other.send("c can-evaluate ctx=\(otherCtx) policy=biometrics")
        // Meanwhile the daemon serves: a third connection, and a check
        // whose answer does not depend on the fingers.
        let third = try daemon.connect()
        XCTAssertOK(try third.request("p ping"))
        XCTAssertEqual(try third.request("s status")["backend"], "fprintd")
        let thirdCtx = try newContext(third)
        XCTAssertLAError(try third.request("k can-evaluate ctx=\(thirdCtx) policy=companion"), -11, "companionNotAvailable")
        XCTAssertFalse(try first.hasLine(), "the waiting check and the ping behind it are not answered yet: \(first.pending)")
        XCTAssertFalse(try other.hasLine(), "\(other.pending)")

        // The D-Bus call times out: the reader is not available, and the
        // ping comes after the check it was sent after.
        let answer = try first.next()
        XCTAssertEqual(answer.tag, "c")
        XCTAssertLAError(answer, -6, "biometryNotAvailable")
        XCTAssertEqual(answer.message, "fprintd did not answer.")
        XCTAssertEqual(try first.next().tag, "p")
        let otherAnswer = try other.next(tag: "c")
        XCTAssertLAError(otherAnswer, -6, "biometryNotAvailable")

        // fprintd answering again is noticed (no daemon restart).
        XCTAssertEqual(Glibc.kill(stack.fprintdPID, SIGCONT), 0)
        try until("the reader is back", timeout: 30) {
            try first.request("c2 can-evaluate ctx=\(ctx) policy=biometrics").status == .ok
        }
    }
}
