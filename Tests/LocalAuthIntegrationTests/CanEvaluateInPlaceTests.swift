// can-evaluate answered in place (`CanEvaluateLine`, from the line's bytes) against
// the general path (`dispatch`): every spelling of the same check gets the
// same reply, every unusual line gets the error it always got, and the log
// holds exactly one policy-checked event per check answered OK or with an
// LAError, none for a protocol error (read offline with `localauthctl log`).
import Foundation
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class CanEvaluateInPlaceTests: IntegrationTestCase {
    // MARK: The rendered reply (CheckedReplies)

    /// The daemon keeps the last successful reply rendered: two users'
    /// checks interleaved, each followed by a change of that user's token,
    /// must always show the asker's current token.
    func testInterleavedUsersAlwaysSeeTheirOwnCurrentDomainState() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let other = try daemon.connect(asUID: 65534)
        var tokens: [UInt32: String] = [:]
        func enroll(_ uid: UInt32) throws {
            XCTAssertOK(try admin.request("\(tag("p")) set-passcode uid=\(uid) secret=1234"))
            let enrolled = try admin.request("\(tag("en")) enroll uid=\(uid)")
            XCTAssertOK(enrolled)
            tokens[uid] = try XCTUnwrap(enrolled["domain-state"])
        }
        try enroll(0)
        try enroll(65534)
        XCTAssertNotEqual(tokens[0], tokens[65534])
        let mine = try newContext(admin), theirs = try newContext(other)
        for round in 0..<4 {
            for (client, ctx, uid) in [(admin, mine, UInt32(0)), (other, theirs, UInt32(65534)), (admin, mine, UInt32(0))] {
                let reply = try client.request("\(tag("c")) can-evaluate ctx=\(ctx) policy=biometrics")
                XCTAssertOK(reply)
                XCTAssertEqual(reply["domain-state"], tokens[uid], "round \(round), uid \(uid)")
                XCTAssertEqual(reply["biometry"], "touchID")
                let owner = try client.request("\(tag("o")) can-evaluate ctx=\(ctx) policy=owner")
                XCTAssertOK(owner)
                XCTAssertNil(owner["domain-state"], "policy 2 shows no token (round \(round))")
            }
            // A new template: a new token for one of them.
            let changed = try admin.request("\(tag("en")) enroll uid=\(round % 2 == 0 ? 0 : 65534) template=t\(round)")
            XCTAssertOK(changed)
            tokens[round % 2 == 0 ? 0 : 65534] = try XCTUnwrap(changed["domain-state"])
        }
    }

    // MARK: Same check, other spellings

    func testQuotedValuesReorderedKeysAndUppercaseHexGiveTheBareLinesAnswer() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let ctx = try newContext(client)
        var recorded: [String] = []

        func spellings(_ policy: String) -> [String] {
            ["ctx=\(ctx) policy=\(policy)", "ctx=\"\(ctx)\" policy=\"\(policy)\"", "policy=\(policy) ctx=\(ctx)",
             "policy=\"\(policy)\" ctx=\"\(ctx)\"", "ctx=\"\(ctx)\" policy=\(policy)",
             "ctx=\(ctx.uppercased()) policy=\(policy)", "policy=\(policy) ctx=\"\(ctx.uppercased())\""]
        }
        // policy: (wire name, number in the log).
        let policies = [("biometrics", 1), ("owner", 2), ("companion", 3), ("biometrics-or-companion", 4)]

        // No passcode: every policy but companion answers passcodeNotSet.
        for (policy, number) in policies {
            let answer = try sameAnswer(client, spellings(policy), recording: number, into: &recorded)
            if policy == "companion" {
                XCTAssertLAError(answer, -11, "companionNotAvailable")
            } else {
                XCTAssertLAError(answer, -5, "passcodeNotSet")
            }
            XCTAssertEqual(answer["biometry"], "touchID", policy)
        }

        // A passcode, nothing enrolled.
        try prepareOwner(client, enroll: false)
        XCTAssertLAError(try sameAnswer(client, spellings("biometrics"), recording: 1, into: &recorded), -7, "biometryNotEnrolled")
        let owner = try sameAnswer(client, spellings("owner"), recording: 2, into: &recorded)
        XCTAssertOK(owner)
        XCTAssertEqual(owner.arguments, ["biometry": "touchID"], "owner: no domain state")

        // Enrolled: the domain state comes back, the same in every spelling.
        let enrolled = try client.request("\(tag("e")) enroll uid=0")
        XCTAssertOK(enrolled)
        let domainState = try XCTUnwrap(enrolled["domain-state"])
        for (policy, number) in [("biometrics", 1), ("biometrics-or-companion", 4)] {
            let answer = try sameAnswer(client, spellings(policy), recording: number, into: &recorded)
            XCTAssertOK(answer)
            XCTAssertEqual(answer.arguments, Arguments([("biometry", "touchID"), ("domain-state", domainState)]), policy)
        }
        XCTAssertEqual(try sameAnswer(client, spellings("owner"), recording: 2, into: &recorded).arguments,
                       ["biometry": "touchID"])
        XCTAssertLAError(try sameAnswer(client, spellings("companion"), recording: 3, into: &recorded), -11,
                         "companionNotAvailable")

        XCTAssertEqual(recorded.count, 7 * 10)
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), recorded, "one policy-checked per answered check, in order")
    }

    func testEverySpellingOfAPolicyGivesTheSameAnswer() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let domainState = try XCTUnwrap(try prepareOwner(client))
        let ctx = try newContext(client)
        var recorded: [String] = []
        // The number, the short name, and Apple's long names (Swift and ObjC).
        let spellings: [(names: [String], number: Int)] = [
            (["1", "biometrics", "deviceOwnerAuthenticationWithBiometrics",
              "LAPolicyDeviceOwnerAuthenticationWithBiometrics"], 1),
            (["2", "owner", "deviceOwnerAuthentication", "LAPolicyDeviceOwnerAuthentication"], 2),
            (["3", "companion", "deviceOwnerAuthenticationWithCompanion", "deviceOwnerAuthenticationWithWatch"], 3),
            (["4", "biometrics-or-companion", "deviceOwnerAuthenticationWithBiometricsOrCompanion",
              "deviceOwnerAuthenticationWithBiometricsOrWatch"], 4),
        ]
        var answers: [Int: Response] = [:]
        for (names, number) in spellings {
            let lines = names.flatMap { ["ctx=\(ctx) policy=\($0)", "policy=\"\($0)\" ctx=\(ctx)"] }
            answers[number] = try sameAnswer(client, lines, recording: number, into: &recorded)
        }
        XCTAssertEqual(answers[1]?.arguments, Arguments([("biometry", "touchID"), ("domain-state", domainState)]))
        XCTAssertEqual(answers[4]?.arguments, answers[1]?.arguments, "policy 4 behaves as policy 1")
        XCTAssertEqual(answers[2]?.arguments, ["biometry": "touchID"])
        XCTAssertLAError(try XCTUnwrap(answers[3]), -11, "companionNotAvailable")

        // Not policies: bad-argument however they are written, and nothing recorded.
        for policy in ["0", "6", "01", "-1", "+1", "1.0", "BIOMETRICS", "Biometrics", "biometric", "biometricsx",
                       "owner-", "\"\"", "\"bio metrics\"", "\"owner\\n\"", "\"\\\"owner\\\"\"", "\u{e9}",
                       "LAPolicyDeviceOwnerAuthenticationWithBiometricsX", "deviceOwnerAuthenticationWithBiometricsOrWat"] {
            let a = try client.request("\(tag("x")) can-evaluate ctx=\(ctx) policy=\(policy)")
            let b = try client.request("\(tag("x")) can-evaluate policy=\(policy) ctx=\"\(ctx)\"")
            XCTAssertProtocolError(a, "bad-argument", policy)
            XCTAssertEqual(answerOf(a), answerOf(b), policy)
        }
        XCTAssertEqual(recorded.count, 4 * 8)
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), recorded)
    }

    // MARK: Lines the in-place path must leave to the general one

    func testUnusualArgumentsGetTheProtocolErrorsOfTheGeneralPathAndRecordNothing() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        let cases: [(arguments: String, name: String, message: String?)] = [
            // Keys can-evaluate does not take: refused before anything else.
            ("ctx=\(ctx) policy=biometrics extra=1", "bad-argument", "Unknown key 'extra' for 'can-evaluate' (allowed: ctx, policy)."),
            ("extra=1 ctx=\(ctx) policy=biometrics", "bad-argument", "Unknown key 'extra' for 'can-evaluate' (allowed: ctx, policy)."),
            ("ctx=\(ctx) policy=biometrics reason=x", "bad-argument", "Unknown key 'reason' for 'can-evaluate' (allowed: ctx, policy)."),
            ("ctxx=\(ctx) policy=biometrics", "bad-argument", "Unknown key 'ctxx' for 'can-evaluate' (allowed: ctx, policy)."),
            ("ctx=\(ctx) polic=biometrics", "bad-argument", "Unknown key 'polic' for 'can-evaluate' (allowed: ctx, policy)."),
            ("ctx=\(ctx) policyy=biometrics", "bad-argument", nil),
            ("policy=1 ctx=\(ctx) x=\"\"", "bad-argument", nil),
            // A key twice: the parser's bad-argument.
            ("ctx=\(ctx) ctx=\(ctx) policy=biometrics", "bad-argument", "The key 'ctx' appears more than once."),
            ("ctx=\(ctx) policy=biometrics policy=owner", "bad-argument", "The key 'policy' appears more than once."),
            ("policy=biometrics ctx=\(ctx) policy=biometrics", "bad-argument", "The key 'policy' appears more than once."),
            // Missing keys.
            ("policy=biometrics", "missing-argument", "ctx= is required."),
            ("policy=\"biometrics\"", "missing-argument", "ctx= is required."),
            ("ctx=\(ctx)", "missing-argument", "policy= is required."),
            ("ctx=\"\(ctx)\"", "missing-argument", "policy= is required."),
            ("", "missing-argument", "ctx= is required."),
            // The context is checked before the policy.
            ("ctx=\(ctx.dropLast()) policy=sideways", "unknown-context", "No such context."),
            ("policy=sideways", "missing-argument", "ctx= is required."),
            ("ctx=\(ctx) policy=sideways", "bad-argument", "Unknown policy \"sideways\"."),
            // Escaped values never name a context or a policy.
            ("ctx=\"\(ctx)\\n\" policy=biometrics", "unknown-context", "No such context."),
            ("ctx=\"\\\\\(ctx.dropFirst())\" policy=biometrics", "unknown-context", "No such context."),
            ("ctx=\(ctx) policy=\"bio\\tmetrics\"", "bad-argument", nil),
            ("ctx=\(ctx) policy=\"owner\\r\"", "bad-argument", nil),
        ]
        for (arguments, name, message) in cases {
            let line = "\(tag("u")) can-evaluate" + (arguments.isEmpty ? "" : " " + arguments)
            let reply = try client.request(line)
            XCTAssertProtocolError(reply, name, line)
            if let message { XCTAssertEqual(reply.message, message, line) }
        }
        // Near misses of the verb are other verbs.
        for verb in ["can-evaluatex", "can", "can-evaluat", "Can-evaluate"] {
            let line = "\(tag("v")) \(verb) ctx=\(ctx) policy=biometrics"
            XCTAssertProtocolError(try client.request(line), verb == "Can-evaluate" ? "bad-syntax" : "unknown-verb", line)
        }
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), [], "protocol errors record nothing")

        // The same connection's usual line right after is answered and recorded once.
        XCTAssertOK(try client.request("\(tag("k")) can-evaluate ctx=\(ctx) policy=biometrics"))
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), ["1:ok"])
    }

    func testAContextOfAnotherConnectionIsUnknownAndNothingIsRecordedForIt() throws {
        let daemon = try startDaemon()
        let owner = try daemon.connect()
        let stranger = try daemon.connect()
        try prepareOwner(owner)
        let ctx = try newContext(owner)
        let own = try newContext(stranger)
        let madeUp = String(repeating: "ab", count: 16)
        let unknown = try stranger.request("\(tag("m")) can-evaluate ctx=\(madeUp) policy=biometrics")
        XCTAssertProtocolError(unknown, "unknown-context")

        // S-12: another connection's context answers as an id that never existed, however written.
        for arguments in ["ctx=\(ctx) policy=biometrics", "policy=biometrics ctx=\(ctx)", "ctx=\"\(ctx)\" policy=\"owner\"",
                          "ctx=\(ctx.uppercased()) policy=1", "ctx=\(ctx) policy=companion", "ctx=\(ctx) policy=5"] {
            let reply = try stranger.request("\(tag("s")) can-evaluate \(arguments)")
            XCTAssertEqual(answerOf(reply), answerOf(unknown), arguments)
        }
        // Its owner never hears of it, and the stranger's own context still works.
        XCTAssertOK(try stranger.request("\(tag("o")) can-evaluate ctx=\(own) policy=owner"))
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), [], "nothing recorded for the stranger's checks")
        XCTAssertEqual(try policyChecks(daemon, ctx: own), ["2:ok"])

        XCTAssertOK(try owner.request("\(tag("o")) can-evaluate ctx=\(ctx) policy=biometrics"))
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), ["1:ok"])
    }

    func testMalformedContextIdsAreUnknownContext() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        let madeUp = try client.request("\(tag("m")) can-evaluate ctx=\(String(repeating: "0", count: 32)) policy=owner")
        XCTAssertProtocolError(madeUp, "unknown-context")
        XCTAssertEqual(madeUp.message, "No such context.")
        let digits = Array(ctx)
        let mangled: [String] = [
            String(digits.dropLast()),                            // 31 hex digits
            String(digits.dropFirst()),
            ctx + "0",                                            // 33
            ctx + ctx,
            "g" + String(digits.dropFirst()),                     // not hex
            String(digits.dropLast()) + "G",
            String(digits[..<16]) + "-" + String(digits[17...]),
            "0x" + String(digits.dropFirst(2)),
            "\u{e9}" + String(digits.dropFirst(2)),                // two bytes in place of two digits
            "\"\"",
            "\"\(ctx) \"",
            "\" \(ctx)\"",
            "\"" + String(digits.dropLast()) + "\"",
        ]
        for value in mangled {
            for line in ["can-evaluate ctx=\(value) policy=owner", "can-evaluate policy=owner ctx=\(value)"] {
                let reply = try client.request("\(tag("b")) \(line)")
                XCTAssertEqual(answerOf(reply), answerOf(madeUp), line)
            }
        }
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), [])
        // Uppercase hex is the same id (ContextID(hex:) takes either case).
        XCTAssertOK(try client.request("\(tag("c")) can-evaluate ctx=\(ctx.uppercased()) policy=owner"))
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), ["2:ok"])
    }

    // MARK: Policy 5 (S-18)

    func testPolicyFiveIsInvalidContextOnAnInvalidatedContextAndBadArgumentOnAnOpenOne() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        let wrist = ["5", "wrist", "deviceOwnerAuthenticationWithWristDetection", "\"5\""]
        for policy in wrist {
            for line in ["can-evaluate ctx=\(ctx) policy=\(policy)", "can-evaluate policy=\(policy) ctx=\"\(ctx)\""] {
                let reply = try client.request("\(tag("w")) \(line)")
                XCTAssertProtocolError(reply, "bad-argument", line)
                XCTAssertEqual(reply.message, "Policy 5 (wrist detection) is not supported.", line)
            }
        }
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), [], "a refused policy 5 records nothing")

        XCTAssertOK(try client.request("\(tag("i")) invalidate ctx=\(ctx)"))
        var recorded: [String] = []
        for policy in wrist {
            let answer = try sameAnswer(client, ["ctx=\(ctx) policy=\(policy)", "policy=\(policy) ctx=\"\(ctx)\""],
                                        recording: 5, into: &recorded)
            XCTAssertLAError(answer, -10, "invalidContext")
        }
        for (policy, number) in [("biometrics", 1), ("owner", 2), ("companion", 3), ("4", 4)] {
            let answer = try sameAnswer(client, ["ctx=\(ctx) policy=\(policy)", "policy=\"\(policy)\" ctx=\(ctx)"],
                                        recording: number, into: &recorded)
            XCTAssertLAError(answer, -10, "invalidContext")
        }
        // Still a protocol error when the policy is no policy at all.
        XCTAssertProtocolError(try client.request("\(tag("n")) can-evaluate ctx=\(ctx) policy=6"), "bad-argument")
        XCTAssertEqual(recorded.count, 16)
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), recorded, "LAErrors are answered checks: recorded")
    }

    // MARK: Tags and pipelining

    func testTagsOfOneAndThirtyTwoCharactersComeBackExactly() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client, enroll: false)
        let ctx = try newContext(client)
        let long = "A.b_C-9" + String(repeating: "z", count: 24) + "Q"
        XCTAssertEqual(long.count, 32)
        for tag in ["x", "7", "-", long, String(repeating: "9", count: 32)] {
            // In place (OK and LAError) and through the general path (protocol errors).
            let lines = ["\(tag) can-evaluate ctx=\(ctx) policy=owner", "\(tag) can-evaluate policy=biometrics ctx=\(ctx)",
                         "\(tag) can-evaluate ctx=\(ctx) policy=wrist", "\(tag) can-evaluate ctx=\(ctx)",
                         "\(tag) can-evaluate ctx=\(ctx) policy=owner policy=owner"]
            try client.sendRaw(Array(lines.map { $0 + "\n" }.joined().utf8))
            var replies: [String] = []
            for _ in lines { replies.append(try XCTUnwrap(try client.nextLine())) }
            let expected = ["\(tag) OK ", "\(tag) ERR domain=la code=-7 ", "\(tag) ERR domain=protocol name=bad-argument ",
                            "\(tag) ERR domain=protocol name=missing-argument ",
                            "\(tag) ERR domain=protocol name=bad-argument "]
            for (reply, start) in zip(replies, expected) {
                XCTAssertTrue(reply.hasPrefix(start), "\(reply) should start with \(start)")
                XCTAssertEqual(try Client.parse(reply).tag, tag)
            }
        }
        // One character longer is no tag at all: `*` answers, and nothing is checked.
        try client.send("\(long)x can-evaluate ctx=\(ctx) policy=owner")
        let refused = try XCTUnwrap(try client.nextLine())
        XCTAssertTrue(refused.hasPrefix("* ERR domain=protocol name=bad-syntax "), refused)
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), Array(repeating: ["2:ok", "1:biometryNotEnrolled"], count: 5).flatMap { $0 })
    }

    func testPipelinedChecksInOneWriteAreAnsweredInOrderWithTheirOwnTags() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let other = try daemon.connect()
        try prepareOwner(client, enroll: false)
        let ctx = try newContext(client)
        let foreign = try newContext(other)

        enum Expect: Equatable { case ok, la(Int, String), protocolError(String) }
        var lines: [(tag: String, text: String, expect: Expect, policy: Int?)] = []
        for round in 0..<40 {
            // An enrollment midway: its OK waits for the log to be durable, and
            // the checks behind it must still come back after it, in order.
            if round == 20 { lines.append(("r20en", "enroll uid=0", .ok, nil)) }
            let enrolled = round >= 20
            let r = "r\(round)"
            lines += [
                ("\(r)a", "can-evaluate ctx=\(ctx) policy=biometrics",
                 enrolled ? .ok : .la(-7, "biometryNotEnrolled"), 1),
                ("\(r)b", "can-evaluate policy=companion ctx=\"\(ctx)\"", .la(-11, "companionNotAvailable"), 3),
                ("\(r)c", "can-evaluate ctx=\(foreign) policy=owner", .protocolError("unknown-context"), nil),
                ("\(r)d", "can-evaluate ctx=\(ctx)", .protocolError("missing-argument"), nil),
                ("\(r)e", "can-evaluate ctx=\(ctx) policy=owner extra=1", .protocolError("bad-argument"), nil),
                ("\(r)f", "can-evaluate ctx=\(ctx)  policy=owner", .protocolError("bad-syntax"), nil),
                ("\(r)g", "can-evaluate policy=2 ctx=\(ctx.uppercased())", .ok, 2),
                ("\(r)h", "can-evaluat ctx=\(ctx) policy=owner", .protocolError("unknown-verb"), nil),
            ]
        }
        let bytes = Array(lines.map { "\($0.tag) \($0.text)\n" }.joined().utf8)
        XCTAssertGreaterThan(bytes.count, 16384, "more than the daemon queues before writing early")
        try client.sendRaw(bytes)

        var recorded: [String] = []
        for expected in lines {
            let line = try XCTUnwrap(try client.nextLine(), "reply to \(expected.tag)")
            let reply = try Client.parse(line)
            XCTAssertEqual(reply.tag, expected.tag, "replies in request order")
            switch expected.expect {
            case .ok: XCTAssertOK(reply, expected.tag)
            case .la(let code, let name): XCTAssertLAError(reply, code, name)
            case .protocolError(let name): XCTAssertProtocolError(reply, name, expected.tag)
            }
            if let policy = expected.policy { recorded.append("\(policy):\(reply.status == .ok ? "ok" : reply.errorName ?? "?")") }
        }
        XCTAssertEqual(client.pending, [], "one reply per line")
        XCTAssertEqual(recorded.count, 120)
        XCTAssertEqual(try policyChecks(daemon, ctx: ctx), recorded)
        XCTAssertEqual(try policyChecks(daemon, ctx: foreign), [])
    }

    // MARK: Helpers

    /// Sends `can-evaluate ARGUMENTS` for each spelling (fresh tags), checks
    /// each reply carries its own tag and that all replies are the same, and
    /// notes the policy-checked each must have recorded when it was answered
    /// (OK or an LAError). Returns the answer.
    private func sameAnswer(_ client: Client, _ spellings: [String], recording policy: Int, into recorded: inout [String],
                            file: StaticString = #filePath, line: UInt = #line) throws -> Response {
        var first: Response?
        for arguments in spellings {
            let requestTag = tag("c")
            let reply = try client.request("\(requestTag) can-evaluate \(arguments)")
            XCTAssertEqual(reply.tag, requestTag, file: file, line: line)
            if let first {
                XCTAssertEqual(answerOf(reply), answerOf(first), "\(arguments) vs \(spellings[0])", file: file, line: line)
            } else {
                first = reply
            }
            XCTAssertTrue(reply.status == .ok || reply.errorDomain == "la", "\(arguments): \(reply)", file: file, line: line)
            recorded.append("\(policy):\(reply.status == .ok ? "ok" : reply.errorName ?? "?")")
        }
        return try XCTUnwrap(first, file: file, line: line)
    }

    /// A reply without its tag.
    private func answerOf(_ reply: Response) -> Response {
        Response(tag: "-", status: reply.status, arguments: reply.arguments)
    }

    /// The policy-checked events the log holds for `ctx`, as "POLICY:RESULT"
    /// (`localauthctl log -o json`, read-only while the daemon runs; each
    /// turn's events reach the file before its replies leave).
    private func policyChecks(_ daemon: DaemonProcess, ctx: String,
                              file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let (code, out, err) = try runToCompletion(try Binary.find("localauthctl"),
                                                   ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertEqual(code, 0, "localauthctl log: \(err)", file: file, line: line)
        var checks: [String] = []
        var sawCreation = false
        for text in out.split(separator: "\n") {
            guard let event = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw HarnessError("not a JSON object: \(text)")
            }
            guard (event["ctx"] as? String)?.lowercased() == ctx.lowercased() else { continue }
            if event["type"] as? String == "context-created" { sawCreation = true }
            guard event["type"] as? String == "policy-checked" else { continue }
            checks.append("\(event["policy"] as? Int ?? -1):\(event["result"] as? String ?? "?")")
        }
        XCTAssertTrue(sawCreation, "the log holds \(ctx)'s creation (the reader works)", file: file, line: line)
        return checks
    }
}
