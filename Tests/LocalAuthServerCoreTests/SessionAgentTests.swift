// Session agents through the server core (S-65..S-69), with logind as the
// harness's table: registration and who may register, which evaluations
// go to an agent, what the agent and the app each hear, who may answer,
// and an agent that goes away mid-prompt. Given / when / then, named after
// the rules.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem
import XCTest
@testable import LocalAuthServer

final class SessionAgentTests: XCTestCase {
    let alice: UserID = 1000
    let bob: UserID = 1001

    /// alice and bob have passcodes (1234) and a finger each; logind puts
    /// pids 500..599 in session 2 (alice's), 600..699 in session 3 (alice's
    /// too) and 700 in session 7 (bob's).
    func harness() throws -> CoreHarness {
        let h = CoreHarness()
        let admin = try XCTUnwrap(h.open(uid: 0))
        for uid in [alice, bob] {
            h.feed("p\(uid) set-passcode uid=\(uid) secret=1234\n", on: admin)
            h.runJobs()
            h.feed("e\(uid) enroll uid=\(uid)\n", on: admin)
        }
        for pid in 500..<600 { h.sessions[ProcessID(pid)] = ("2", alice) }
        for pid in 600..<700 { h.sessions[ProcessID(pid)] = ("3", alice) }
        h.sessions[700] = ("7", bob)
        return h
    }

    /// A connection of `uid` from `pid` that registered (`a register-agent`).
    func agent(_ h: CoreHarness, uid: UserID, pid: ProcessID, _ extra: String = "") throws -> Connection.ID {
        let id = try XCTUnwrap(h.open(uid: uid, pid: pid))
        h.feed("a register-agent\(extra)\n", on: id)
        return id
    }

    /// An app of `uid` from `pid` with a context that asked for the agent.
    func app(_ h: CoreHarness, uid: UserID, pid: ProcessID, agent: Bool = true) throws -> (Connection.ID, String) {
        let id = try XCTUnwrap(h.open(uid: uid, pid: pid))
        let ctx = try XCTUnwrap(h.newContext(on: id))
        if agent {
            h.feed("s set ctx=\(ctx) prompt=agent\n", on: id)
            XCTAssertEqual(h.reply("s", on: id), "s OK")
        }
        return (id, ctx)
    }

    func parsed(_ line: String?) throws -> Response { try Response.parse(try XCTUnwrap(line)) }

    func recorded(_ h: CoreHarness) -> [EventBody] { h.recorder.events.map(\.body) }

    // MARK: S-65

    func test_S65_anAgentRegistersForItsOwnSessionAsLogindSaysIt() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        XCTAssertEqual(h.sessionLookups.map(\.pid), [501], "logind is asked about the caller's process")
        XCTAssertEqual(h.reply("a", on: a), "a OK session=2 uid=1000")
        XCTAssertTrue(recorded(h).contains(.agentRegistered(uid: alice, session: "2", pid: 501)))
        // Naming its own session is the same.
        let b = try agent(h, uid: alice, pid: 601, " session=3")
        XCTAssertEqual(h.reply("a", on: b), "a OK session=3 uid=1000")
    }

    func test_S65_registeringForAnotherUsersSessionIsRefusedAndRecorded() throws {
        let h = try harness()
        // bob's process in alice's session (su without a session of its own).
        let b = try agent(h, uid: bob, pid: 502)
        let reply = try parsed(h.reply("a", on: b))
        XCTAssertEqual(reply.errorName, "permission-denied")
        XCTAssertTrue(reply.message?.contains("belongs to uid 1000") == true, reply.message ?? "")
        XCTAssertTrue(recorded(h).contains(.agentRefused(AgentRefusal(uid: bob, pid: 502, request: .registerAgent,
                                                                    reason: .notSessionOwner, session: "2"))))
        XCTAssertNil(h.core.agents.agent(ofSession: "2"))
    }

    func test_S65_registeringForASessionTheCallerIsNotInIsRefusedAndRecorded() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501, " session=3")
        XCTAssertEqual(try parsed(h.reply("a", on: a)).errorName, "permission-denied")
        XCTAssertTrue(recorded(h).contains(.agentRefused(AgentRefusal(uid: alice, pid: 501, request: .registerAgent,
                                                                    reason: .notInSession, session: "3"))))
        XCTAssertNil(h.core.agents.agent(ofSession: "3"))
        // A process in no session at all.
        let none = try agent(h, uid: alice, pid: 42)
        XCTAssertEqual(try parsed(h.reply("a", on: none)).errorName, "permission-denied")
        XCTAssertTrue(recorded(h).contains(.agentRefused(AgentRefusal(uid: alice, pid: 42, request: .registerAgent,
                                                                    reason: .noSession))))
    }

    func test_S65_aSecondAgentForOneSessionIsRefusedAndTheFirstStays() throws {
        let h = try harness()
        let first = try agent(h, uid: alice, pid: 501)
        let second = try agent(h, uid: alice, pid: 502)
        XCTAssertEqual(try parsed(h.reply("a", on: second)).errorName, "permission-denied")
        XCTAssertTrue(recorded(h).contains(.agentRefused(AgentRefusal(uid: alice, pid: 502, request: .registerAgent,
                                                                    reason: .sessionHasAgent, session: "2"))))
        XCTAssertEqual(h.core.agents.agent(ofSession: "2")?.connection, first)
        // A connection that is an agent cannot become another (not recorded).
        let count = h.recorder.events.count
        h.feed("b register-agent\n", on: first)
        XCTAssertEqual(try parsed(h.reply("b", on: first)).errorName, "bad-state")
        XCTAssertEqual(h.recorder.events.count, count)
    }

    func test_S65_logindUnavailableIsUnavailableNotRecorded() throws {
        let h = try harness()
        h.answersSessionsAtOnce = false
        let a = try XCTUnwrap(h.open(uid: alice, pid: 501))
        h.feed("a register-agent\n", on: a)
        XCTAssertNil(h.reply("a", on: a), "it waits for logind")
        let count = h.recorder.events.count
        h.turn()
        h.answerSession(a, pid: 501, .unavailable("logind is not running."))
        h.endOfTurn()
        let reply = try parsed(h.reply("a", on: a))
        XCTAssertEqual(reply.errorName, "unavailable")
        XCTAssertEqual(h.recorder.events.count, count)
    }

    func test_S65_aLookupLogindNeverAnswersEndsAsUnavailable() throws {
        let h = try harness()
        h.answersSessionsAtOnce = false
        let a = try XCTUnwrap(h.open(uid: alice, pid: 501))
        h.feed("a register-agent\n", on: a)
        h.turn(advance: 3_100_000_000)
        h.timer()
        h.endOfTurn()
        XCTAssertEqual(try parsed(h.reply("a", on: a)).errorName, "unavailable")
    }

    // MARK: S-66, S-67

    func test_S66_S67_anAppsEvaluationIsPromptedByItsSessionsAgentWithTheIdentityTheKernelGives() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=owner reason=\"unlock your notes\"\n", on: app)
        // The app hears only that the system prompts.
        XCTAssertEqual(h.lines(app).filter { $0.hasPrefix("e ") }, ["e PROMPT kind=agent"])
        // The agent hears the prompt, touch or type, with who asks.
        let prompt = try parsed(h.reply("a", on: a))
        XCTAssertEqual(prompt.status, .prompt)
        XCTAssertEqual(prompt.arguments.value(for: "request"), "1")
        XCTAssertEqual(prompt.arguments.value(for: "kind"), "biometric-or-passcode")
        XCTAssertEqual(prompt.arguments.value(for: "policy"), "owner")
        XCTAssertEqual(prompt.arguments.value(for: "app-uid"), "1000")
        XCTAssertEqual(prompt.arguments.value(for: "app-pid"), "510")
        XCTAssertEqual(prompt.arguments.value(for: "app-process"), "70510")
        XCTAssertEqual(prompt.arguments.value(for: "reason"), "unlock your notes")
        XCTAssertNil(prompt.arguments.value(for: "ctx"), "never the context id")
        XCTAssertFalse(h.lines(a).joined().contains(ctx), "never the context id")
        XCTAssertTrue(recorded(h).contains(.promptsRouted(uid: alice, ctx: ContextID(hex: ctx)!, eval: 1,
            route: AgentRoute(session: "2", agentPID: 501, passcodePrompts: true))))
        // The agent types the passcode; it is checked as any, the app gets the answer.
        h.feed("p passcode request=1 secret=1234\n", on: a)
        XCTAssertEqual(h.reply("p", on: a), "p OK")
        h.runJobs()
        XCTAssertEqual(h.reply("a", on: a), "a DONE request=1 result=success")
        XCTAssertEqual(h.reply("e", on: app), "e OK method=passcode")
        // The request is closed: answering it again is unknown.
        h.feed("c cancel request=1\n", on: a)
        XCTAssertEqual(try parsed(h.reply("c", on: a)).errorName, "unknown-request")
    }

    func test_S66_aFingerMatchAndACancelAtTheAgentEndTheAppsEvaluation() throws {
        let h = try harness()
        let admin = try XCTUnwrap(h.open(uid: 0))
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=biometrics reason=x\n", on: app)
        XCTAssertEqual(try parsed(h.reply("a", on: a)).arguments.value(for: "kind"), "biometric")
        h.feed("s sensor uid=1000 result=match\n", on: admin)
        XCTAssertEqual(h.reply("a", on: a), "a DONE request=1 result=success")
        XCTAssertTrue(h.reply("e", on: app)?.hasPrefix("e OK method=biometric") == true)
        // A second evaluation is request 2; the agent's cancel is userCancel.
        let (app2, ctx2) = try self.app(h, uid: alice, pid: 511)
        h.feed("e evaluate ctx=\(ctx2) policy=biometrics reason=x\n", on: app2)
        XCTAssertEqual(try parsed(h.reply("a", on: a)).arguments.value(for: "request"), "2")
        h.feed("c cancel request=2\n", on: a)
        XCTAssertEqual(h.reply("c", on: a), "c OK")
        XCTAssertEqual(h.reply("a", on: a), "a DONE request=2 result=userCancel")
        XCTAssertEqual(try parsed(h.reply("e", on: app2)).errorName, "userCancel")
    }

    func test_S66_anAppInASessionWithoutAnAgentPromptsItselfAsToday() throws {
        let h = try harness()
        _ = try agent(h, uid: alice, pid: 501)  // session 2's; the app is in session 3
        let (app, ctx) = try app(h, uid: alice, pid: 610)
        h.feed("e evaluate ctx=\(ctx) policy=biometrics reason=x\n", on: app)
        XCTAssertTrue(h.reply("e", on: app)?.hasPrefix("e PROMPT kind=biometric attempt=1") == true, "\(h.lines(app))")
        XCTAssertFalse(recorded(h).contains { if case .promptsRouted = $0 { return true } else { return false } })
    }

    func test_S66_withNoAgentAnywhereLogindIsNotAskedAndNothingChanges() throws {
        let h = try harness()
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=biometrics reason=x\n", on: app)
        XCTAssertTrue(h.reply("e", on: app)?.hasPrefix("e PROMPT kind=biometric attempt=1") == true)
        XCTAssertTrue(h.sessionLookups.isEmpty)
    }

    func test_S66_anotherUsersAppInTheSessionIsNotPromptedByItsAgent() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: bob, pid: 520)  // bob's process in alice's session 2
        h.feed("e evaluate ctx=\(ctx) policy=biometrics reason=x\n", on: app)
        XCTAssertTrue(h.reply("e", on: app)?.hasPrefix("e PROMPT kind=biometric") == true)
        XCTAssertEqual(h.lines(a), ["a OK session=2 uid=1000"])
    }

    func test_S66_anAppWaitsForLogindBeforeItsEvaluationStarts() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        h.answersSessionsAtOnce = false
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=biometrics reason=x\nq ping\n", on: app)
        XCTAssertNil(h.reply("e", on: app))
        XCTAssertNil(h.reply("q", on: app), "the lines behind it wait too")
        h.turn()
        h.answerSession(app, pid: 510)
        h.endOfTurn()
        XCTAssertEqual(h.lines(app).suffix(2), ["e PROMPT kind=agent", "q OK"])
        XCTAssertEqual(try parsed(h.reply("a", on: a)).arguments.value(for: "kind"), "biometric")
    }

    func test_S66_onBehalfContextsKeepTheirPAMConversation() throws {
        let h = try harness()
        // On-behalf contexts on the simulated sensor: the test-only switch (S-52).
        h.core.configuration.daemon.insecureTestBackendsForPAM = true
        let root = try XCTUnwrap(h.open(uid: 0, pid: 530))
        h.feed("n new uid=1000 service=sudo\n", on: root)
        let ctx = try XCTUnwrap(h.reply("n", on: root)?.split(separator: "=").last)
        h.feed("s set ctx=\(ctx) prompt=agent\n", on: root)
        XCTAssertEqual(try parsed(h.reply("s", on: root)).errorName, "bad-argument")
    }

    func test_S66_S30_twoSessionsOfOneUserEachHaveTheirAgentAndShareOnePrompt() throws {
        let h = try harness()
        let a2 = try agent(h, uid: alice, pid: 501)
        let a3 = try agent(h, uid: alice, pid: 601)
        let (app2, ctx2) = try app(h, uid: alice, pid: 510)
        let (app3, ctx3) = try app(h, uid: alice, pid: 610)
        h.feed("e evaluate ctx=\(ctx2) policy=biometrics reason=x\n", on: app2)
        XCTAssertEqual(try parsed(h.reply("a", on: a2)).status, .prompt)
        // The newer prompt of the same user, in the other session, preempts (S-30).
        h.feed("e evaluate ctx=\(ctx3) policy=biometrics reason=y\n", on: app3)
        XCTAssertEqual(h.reply("a", on: a2), "a DONE request=1 result=systemCancel")
        XCTAssertEqual(try parsed(h.reply("e", on: app2)).arguments.value(for: "reason"), "preempted")
        let prompt = try parsed(h.reply("a", on: a3))
        XCTAssertEqual(prompt.arguments.value(for: "reason"), "y")
        XCTAssertEqual(prompt.arguments.value(for: "app-pid"), "610")
    }

    // MARK: S-68

    func test_S68_theAppCannotAnswerThePromptsItsAgentShowsAndItsPasscodeIsRecordedUnchecked() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=owner reason=x\n", on: app)
        h.feed("p passcode ctx=\(ctx) secret=1234\n", on: app)
        XCTAssertEqual(try parsed(h.reply("p", on: app)).errorName, "permission-denied")
        XCTAssertTrue(h.jobs.isEmpty, "nothing is checked")
        XCTAssertTrue(recorded(h).contains(.agentRefused(AgentRefusal(uid: alice, pid: 510, request: .passcode,
            reason: .promptsBelongToAgent, session: "2", ctx: ContextID(hex: ctx)!, eval: 1))))
        for verb in ["fallback", "cancel"] {
            h.feed("v \(verb) ctx=\(ctx)\n", on: app)
            XCTAssertEqual(try parsed(h.reply("v", on: app)).errorName, "permission-denied", verb)
        }
        XCTAssertEqual(h.core.authenticator.state.user(alice).passcodeFailures, 0)
        XCTAssertNotNil(h.core.authenticator.state.contexts[ContextID(hex: ctx)!]?.evaluation, "it still waits for the agent")
        // invalidate still ends it, with appCancel (S-13).
        h.feed("i invalidate ctx=\(ctx)\n", on: app)
        XCTAssertEqual(try parsed(h.reply("e", on: app)).errorName, "appCancel")
        XCTAssertEqual(h.reply("a", on: a), "a DONE request=1 result=appCancel")
    }

    func test_S68_anotherConnectionsRequestNumberIsUnknown() throws {
        let h = try harness()
        _ = try agent(h, uid: alice, pid: 501)
        let other = try agent(h, uid: alice, pid: 601)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=owner reason=x\n", on: app)
        for line in ["p passcode request=1 secret=1234", "p fallback request=1", "p cancel request=01",
                     "p cancel request=1 ctx=\(ctx)"] {
            h.feed(line + "\n", on: other)
            let name = try parsed(h.reply("p", on: other)).errorName
            XCTAssertTrue(name == "unknown-request" || name == "bad-argument", "\(line): \(name ?? "")")
        }
        XCTAssertTrue(h.jobs.isEmpty)
    }

    func test_S68_anAgentDisappearingMidPromptEndsItWithSystemCancelAndCountsNothing() throws {
        let h = try harness()
        let admin = try XCTUnwrap(h.open(uid: 0))
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=owner reason=x\n", on: app)
        h.feed("s sensor uid=1000 result=nomatch\n", on: admin)
        let before = h.core.authenticator.state.user(alice)
        let count = h.recorder.events.count
        // When the agent goes away,
        h.turn()
        h.core.peerClosed(a)
        h.perform()
        h.endOfTurn()
        // then the app's evaluation ends with systemCancel, agent-gone, after the unregistration,
        let answer = try parsed(h.reply("e", on: app))
        XCTAssertEqual(answer.errorName, "systemCancel")
        XCTAssertEqual(answer.arguments.value(for: "reason"), "agent-gone")
        let tail = Array(recorded(h)[count...])
        XCTAssertEqual(tail.first, .agentUnregistered(uid: alice, session: "2", pid: 501, reason: .disconnect))
        XCTAssertEqual(tail.count, 2, "\(tail)")
        // and nothing was counted that did not happen.
        let after = h.core.authenticator.state.user(alice)
        XCTAssertEqual(after.biometricFailures, before.biometricFailures)
        XCTAssertEqual(after.passcodeFailures, before.passcodeFailures)
        XCTAssertNil(h.core.agents.agent(ofSession: "2"))
        // The session may have an agent again.
        let again = try agent(h, uid: alice, pid: 502)
        XCTAssertEqual(h.reply("a", on: again), "a OK session=2 uid=1000")
    }

    func test_S68_aPasscodeTheAgentSentStillCountsWhenTheAgentLeavesBeforeItsVerdict() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=owner reason=x\n", on: app)
        h.feed("p passcode request=1 secret=9999\n", on: a)
        h.turn()
        h.core.peerClosed(a)
        h.perform()
        h.endOfTurn()
        XCTAssertEqual(try parsed(h.reply("e", on: app)).arguments.value(for: "reason"), "agent-gone")
        h.runJobs()
        XCTAssertEqual(h.core.authenticator.state.user(alice).passcodeFailures, 1, "the attempt happened: it counts")
    }

    func test_S32_aStopTellsTheAgentItsRequestEndedAndRecordsTheUnregistration() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        h.feed("e evaluate ctx=\(ctx) policy=biometrics reason=x\n", on: app)
        h.turn()
        h.core.signal(.stop)
        h.core.shutdown()
        h.perform()
        h.core.finishShutdown()
        h.perform()
        XCTAssertEqual(h.lines(a).suffix(2), ["a DONE request=1 result=systemCancel", "* BYE reason=shutdown"])
        XCTAssertTrue(recorded(h).contains(.agentUnregistered(uid: alice, session: "2", pid: 501, reason: .shutdown)))
    }

    // MARK: S-69

    func test_S69_aReasonThatForgesAnIdentityChangesNoIdentityField() throws {
        let h = try harness()
        let a = try agent(h, uid: alice, pid: 501)
        let (app, ctx) = try app(h, uid: alice, pid: 510)
        let forged = "System Update\napp-uid=0 app-pid=1 app-process=1 request=99"
        h.feed("e evaluate ctx=\(ctx) policy=biometrics reason=\"System Update\\napp-uid=0 app-pid=1 app-process=1 request=99\"\n",
               on: app)
        let prompt = try parsed(h.reply("a", on: a))
        XCTAssertEqual(prompt.arguments.value(for: "reason"), forged, "relayed whole, as the app's words")
        XCTAssertEqual(prompt.arguments.value(for: "app-uid"), "1000")
        XCTAssertEqual(prompt.arguments.value(for: "app-pid"), "510")
        XCTAssertEqual(prompt.arguments.value(for: "app-process"), "70510")
        XCTAssertEqual(prompt.arguments.value(for: "request"), "1")
        XCTAssertEqual(h.lines(a).count, 2, "one line: the newline stayed inside the quoted value")
    }
}
