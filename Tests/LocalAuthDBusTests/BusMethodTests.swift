// S-70: every method of the D-Bus API answers as the request it stands for,
// through the real daemon on a private system bus, with the simulated
// sensor fed by the administrator on the socket; a request's Prompt and
// Completed signals carry the evaluation's PROMPT lines and final answer.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class BusMethodTests: BusTestCase {
    private let rootInterface = BusTestCase.service

    /// uid 0 with a passcode and one template; returns the domain state's bytes.
    @discardableResult
    private func prepareOwner() throws -> [Int] {
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        let enrolled = try admin.ok("enroll uid=0")
        return try XCTUnwrap(enrolled["domain-state"]).hexBytes
    }

    private func context(_ client: BusClient) throws -> String {
        let path = try XCTUnwrap(try client.values(BusTestCase.root, rootInterface, "CreateContext").first as? String)
        XCTAssertTrue(path.hasPrefix(BusTestCase.root + "/context/"), path)
        return path
    }

    func test_S70_canEvaluatePolicyAnswersAsTheSocketsCanEvaluate() throws {
        try startDaemon()
        let client = try client()
        let ctx = try context(client)
        // No passcode yet: an LAError is an answer, not a D-Bus error (S-18).
        let before = try client.values(ctx, BusTestCase.contextInterface, "CanEvaluatePolicy", "u", [1])
        XCTAssertEqual(before[0] as? Bool, false)
        XCTAssertEqual(before[1] as? Int, 1, "biometry_type touchID (S-17)")
        XCTAssertEqual(before[2] as? Int, -5)
        XCTAssertEqual(before[3] as? String, "passcodeNotSet")
        let token = try prepareOwner()
        let after = try client.values(ctx, BusTestCase.contextInterface, "CanEvaluatePolicy", "u", [1])
        XCTAssertEqual(after[0] as? Bool, true)
        XCTAssertEqual(after[2] as? Int, 0)
        XCTAssertEqual(after[4] as? [Int], token, "the domain state of policy 1 (S-19)")
        let owner = try client.values(ctx, BusTestCase.contextInterface, "CanEvaluatePolicy", "u", [2])
        XCTAssertEqual(owner[4] as? [Int], [], "no domain state for policy 2")
        // The root's one-call check, for callers that keep no connection.
        let once = try client.values(BusTestCase.root, rootInterface, "CanEvaluatePolicy", "u", [1])
        XCTAssertEqual(once[0] as? Bool, true)
        XCTAssertEqual(once[4] as? [Int], token)
        // Policy 5 is a protocol error (S-18): the request's error, by name.
        XCTAssertEqual(try client.call(ctx, BusTestCase.contextInterface, "CanEvaluatePolicy", "u", [5]).errorName,
                       BusTestCase.errorPrefix + "BadArgument")
    }

    func test_S70_anEvaluationReportsItsPromptsAndItsOneFinalAnswerAsSignals() throws {
        try startDaemon()
        try prepareOwner()
        let admin = try admin()
        let client = try client()
        let ctx = try context(client)
        let request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                      [2, "unlock your notes", [String: Any]()]).first as? String)
        let first = try client.signal(of: request)
        XCTAssertEqual(first.member, "Prompt")
        XCTAssertEqual(first.args[0] as? String, "biometric")
        let details = try XCTUnwrap(first.args[1] as? [String: Any])
        XCTAssertEqual(details["attempt"] as? Int, 1)
        XCTAssertEqual(details["biometry"] as? Int, 1)
        XCTAssertEqual(details["reason"] as? String, "unlock your notes")
        XCTAssertEqual(details["cancel"] as? String, "Cancel")
        XCTAssertNil(details["fallback"], "no fallback on the first prompt (S-27)")

        try admin.ok("sensor uid=0 result=nomatch")
        let second = try client.signal(of: request)
        XCTAssertEqual(second.args[0] as? String, "biometric")
        let offered = try XCTUnwrap(second.args[1] as? [String: Any])
        XCTAssertEqual(offered["attempt"] as? Int, 2)
        XCTAssertEqual(offered["fallback"] as? String, "Enter Password")
        XCTAssertEqual(offered["message"] as? String, "Try again.")

        // Fallback, then a wrong and a right passcode, through the request.
        XCTAssertNotNil(try client.call(request, BusTestCase.requestInterface, "Fallback").values)
        let passcode = try client.signal(of: request)
        XCTAssertEqual(passcode.args[0] as? String, "passcode")
        XCTAssertEqual((passcode.args[1] as? [String: Any])?["attempts-left"] as? Int, 6)
        XCTAssertNotNil(try client.call(request, BusTestCase.requestInterface, "Passcode", "ay", [bytes("4321")]).values)
        let again = try client.signal(of: request)
        XCTAssertEqual(again.args[0] as? String, "passcode")
        XCTAssertEqual((again.args[1] as? [String: Any])?["attempts-left"] as? Int, 5, "the wrong one counted (S-5)")
        XCTAssertNotNil(try client.call(request, BusTestCase.requestInterface, "Passcode", "ay", [bytes("1234")]).values)
        let completed = try client.signal(of: request)
        XCTAssertEqual(completed.member, "Completed")
        XCTAssertEqual(completed.args[0] as? Bool, true)
        XCTAssertEqual(completed.args[1] as? String, "passcode")
        XCTAssertEqual(completed.args[2] as? Int, 0)
        // The request is gone with its Completed (S-71).
        XCTAssertEqual(try client.call(request, BusTestCase.requestInterface, "Cancel").errorName,
                       "org.freedesktop.DBus.Error.UnknownObject")
        // A second evaluation of the context succeeds at once (S-23): taken,
        // then completed with method=cached, with no prompt.
        let cached = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                     [2, "again", [String: Any]()]).first as? String)
        let answer = try client.signal(of: cached)
        XCTAssertEqual(answer.member, "Completed")
        XCTAssertEqual(answer.args[1] as? String, "cached")
    }

    func test_S70_aMatchCompletesWithTheDomainStateAndAnLAErrorWithItsCodeAndName() throws {
        try startDaemon()
        let token = try prepareOwner()
        let admin = try admin()
        let client = try client()
        let ctx = try context(client)
        let matched = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                      [1, "pay", [String: Any]()]).first as? String)
        XCTAssertEqual(try client.signal(of: matched).member, "Prompt")
        try admin.ok("sensor uid=0 result=match")
        let success = try client.signal(of: matched)
        XCTAssertEqual(success.args[0] as? Bool, true)
        XCTAssertEqual(success.args[1] as? String, "biometric")
        XCTAssertEqual((success.args[4] as? [String: Any])?["domain-state"] as? [Int], token)

        let other = try context(client)
        let cancelled = try XCTUnwrap(try client.values(other, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                        [1, "pay", [String: Any]()]).first as? String)
        XCTAssertEqual(try client.signal(of: cancelled).member, "Prompt")
        XCTAssertNotNil(try client.call(cancelled, BusTestCase.requestInterface, "Cancel").values)
        let failure = try client.signal(of: cancelled)
        XCTAssertEqual(failure.member, "Completed")
        XCTAssertEqual(failure.args[0] as? Bool, false)
        XCTAssertEqual(failure.args[2] as? Int, -2)
        XCTAssertEqual(failure.args[3] as? String, "userCancel")
        XCTAssertEqual((failure.args[4] as? [String: Any])?["domain"] as? String, "la")

        // Invalidate ends a running evaluation with appCancel (S-13).
        let third = try context(client)
        let invalidated = try XCTUnwrap(try client.values(third, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                          [1, "pay", [String: Any]()]).first as? String)
        XCTAssertEqual(try client.signal(of: invalidated).member, "Prompt")
        XCTAssertNotNil(try client.call(third, BusTestCase.contextInterface, "Invalidate").values)
        let ended = try client.signal(of: invalidated)
        XCTAssertEqual(ended.args[3] as? String, "appCancel")
        let after = try client.values(third, BusTestCase.contextInterface, "CanEvaluatePolicy", "u", [1])
        XCTAssertEqual(after[3] as? String, "invalidContext")
    }

    func test_S16_theContextsPropertiesAreReadWithGetAndWrittenWithSet() throws {
        try startDaemon()
        let client = try client()
        let ctx = try context(client)
        let properties = "org.freedesktop.DBus.Properties"
        let all = try XCTUnwrap(try client.values(ctx, properties, "GetAll", "s", [BusTestCase.contextInterface]).first as? [String: Any])
        XCTAssertEqual(all["LocalizedFallbackTitle"] as? String, "Enter Password")
        XCTAssertEqual(all["LocalizedCancelTitle"] as? String, "Cancel")
        XCTAssertEqual(all["TouchIDAuthenticationAllowableReuseDuration"] as? Int, 0)
        XCTAssertEqual(all["InteractionNotAllowed"] as? Bool, false)
        XCTAssertEqual(all["BiometryType"] as? Int, 0, "none before the first check (S-17)")
        XCTAssertEqual(all["State"] as? String, "open")
        XCTAssertNil(all["LocalizedReason"], "write-only")
        XCTAssertNotNil(try client.call(ctx, properties, "Set", "ssv",
                                        [BusTestCase.contextInterface, "LocalizedCancelTitle", ["v": ["s", "Not now"]]]).values)
        XCTAssertNotNil(try client.call(ctx, properties, "Set", "ssv",
                                        [BusTestCase.contextInterface, "TouchIDAuthenticationAllowableReuseDuration", ["v": ["u", 30]]]).values)
        XCTAssertNotNil(try client.call(ctx, properties, "Set", "ssv",
                                        [BusTestCase.contextInterface, "InteractionNotAllowed", ["v": ["b", true]]]).values)
        XCTAssertEqual(try client.values(ctx, properties, "Get", "ss", [BusTestCase.contextInterface, "LocalizedCancelTitle"]).first as? String,
                       "Not now")
        XCTAssertEqual(try client.values(ctx, properties, "Get", "ss",
                                         [BusTestCase.contextInterface, "TouchIDAuthenticationAllowableReuseDuration"]).first as? Int, 30)
        XCTAssertEqual(try client.values(ctx, properties, "Get", "ss", [BusTestCase.contextInterface, "InteractionNotAllowed"]).first as? Bool,
                       true)
        XCTAssertEqual(all["Prompts"] as? String, "client")
        XCTAssertNotNil(try client.call(ctx, properties, "Set", "ssv",
                                        [BusTestCase.contextInterface, "Prompts", ["v": ["s", "agent"]]]).values)
        XCTAssertEqual(try client.values(ctx, properties, "Get", "ss", [BusTestCase.contextInterface, "Prompts"]).first as? String,
                       "agent", "S-66's property")
        XCTAssertEqual(try client.call(ctx, properties, "Set", "ssv", [BusTestCase.contextInterface, "State", ["v": ["s", "open"]]]).errorName,
                       "org.freedesktop.DBus.Error.PropertyReadOnly")
        XCTAssertEqual(try client.call(ctx, properties, "Set", "ssv",
                                       [BusTestCase.contextInterface, "InteractionNotAllowed", ["v": ["s", "yes"]]]).errorName,
                       "org.freedesktop.DBus.Error.InvalidArgs")
        // Each set is the socket's `set`, recorded (S-16).
        let names = try events().filter { $0["type"] as? String == "context-property-set" }.compactMap { $0["name"] as? String }
        XCTAssertEqual(names, ["cancel-title", "reuse-duration", "interaction-not-allowed", "prompt"])
    }

    func test_S71_theEnvironmentIsTheCallersUserAndItsChangesArePropertiesChanged() throws {
        try startDaemon()
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        let client = try client()
        let path = BusTestCase.root + "/user/self"
        let all = try XCTUnwrap(try client.values(path, "org.freedesktop.DBus.Properties", "GetAll", "s",
                                                  [BusTestCase.environmentInterface]).first as? [String: Any])
        XCTAssertEqual(all["Uid"] as? Int, 0)
        XCTAssertEqual(all["BiometryType"] as? Int, 1)
        XCTAssertEqual(all["BiometryIsEnrolled"] as? Bool, false)
        XCTAssertEqual(all["BiometryIsUsable"] as? Bool, false)
        XCTAssertEqual(all["UserPasswordIsSet"] as? Bool, true)
        let enrolled = try admin.ok("enroll uid=0")
        let changed = try client.signal(of: path)
        XCTAssertEqual(changed.member, "PropertiesChanged")
        XCTAssertEqual(changed.args[0] as? String, BusTestCase.environmentInterface)
        let values = try XCTUnwrap(changed.args[1] as? [String: Any])
        XCTAssertEqual(values["BiometryIsEnrolled"] as? Bool, true)
        XCTAssertEqual(values["BiometryIsUsable"] as? Bool, true)
        XCTAssertEqual(values["BiometryStateHash"] as? [Int], try XCTUnwrap(enrolled["domain-state"]).hexBytes)
        XCTAssertNil(values["Uid"], "only what changed")
        XCTAssertEqual(try client.values(path, "org.freedesktop.DBus.Properties", "Get", "ss",
                                         [BusTestCase.environmentInterface, "BiometryIsEnrolled"]).first as? Bool, true)
    }

    func test_S70_rightsAreSavedAuthorizedReadAndRemovedThroughTheBus() throws {
        try startDaemon()
        try prepareOwner()
        let admin = try admin()
        let client = try client()
        XCTAssertNotNil(try client.call(BusTestCase.root, rootInterface, "SaveRight", "ssay",
                                        ["com.example.vault", "biometry", bytes("s3cret")]).values)
        let state = try client.values(BusTestCase.root, rootInterface, "RightState", "s", ["com.example.vault"])
        XCTAssertEqual(state[0] as? String, "biometry")
        XCTAssertEqual(state[1] as? Bool, true)
        let ctx = try context(client)
        XCTAssertEqual(try client.call(ctx, BusTestCase.contextInterface, "Secret", "s", ["com.example.vault"]).errorName,
                       BusTestCase.errorPrefix + "NotAuthorized")
        let request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "Authorize", "ssa{sv}",
                                                      ["com.example.vault", "open the vault", [String: Any]()]).first as? String)
        XCTAssertEqual(try client.signal(of: request).member, "Prompt")
        try admin.ok("sensor uid=0 result=match")
        XCTAssertEqual(try client.signal(of: request).args[0] as? Bool, true)
        let secret = try client.values(ctx, BusTestCase.contextInterface, "Secret", "s", ["com.example.vault"])
        XCTAssertEqual(secret.first as? [Int], Array("s3cret".utf8).map(Int.init))
        XCTAssertNotNil(try client.call(ctx, BusTestCase.contextInterface, "Deauthorize", "s", ["com.example.vault"]).values)
        XCTAssertEqual(try client.call(ctx, BusTestCase.contextInterface, "Secret", "s", ["com.example.vault"]).errorName,
                       BusTestCase.errorPrefix + "NotAuthorized")
        XCTAssertNotNil(try client.call(BusTestCase.root, rootInterface, "RemoveRight", "s", ["com.example.vault"]).values)
        XCTAssertEqual(try client.call(BusTestCase.root, rootInterface, "RightState", "s", ["com.example.vault"]).errorName,
                       BusTestCase.errorPrefix + "UnknownRight")
        XCTAssertNotNil(try client.call(BusTestCase.root, rootInterface, "SaveRight", "ssay", ["a.b", "default", bytes("")]).values)
        XCTAssertNotNil(try client.call(BusTestCase.root, rootInterface, "RemoveAllRights").values)
        XCTAssertEqual(try client.call(BusTestCase.root, rootInterface, "RightState", "s", ["a.b"]).errorName,
                       BusTestCase.errorPrefix + "UnknownRight")
    }

    func test_S22_aSecondEvaluationOfAContextIsBusyUntilTheFirstCompleted() throws {
        try startDaemon()
        try prepareOwner()
        let client = try client()
        let ctx = try context(client)
        let first = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                    [1, "one", [String: Any]()]).first as? String)
        XCTAssertEqual(try client.call(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                       [1, "two", [String: Any]()]).errorName, BusTestCase.errorPrefix + "Busy")
        // An empty reason is the request's refusal (S-21): an error, no request.
        let other = try context(client)
        XCTAssertEqual(try client.call(other, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                       [1, "", [String: Any]()]).errorName, BusTestCase.errorPrefix + "BadArgument")
        XCTAssertNotNil(try client.call(first, BusTestCase.requestInterface, "Cancel").values)
        XCTAssertEqual(try client.signal(of: first).member, "Prompt")
        XCTAssertEqual(try client.signal(of: first).args[3] as? String, "userCancel")
    }
}

extension String {
    /// The bytes of a hex string, as JSON numbers.
    var hexBytes: [Int] {
        var bytes: [Int] = []
        var index = startIndex
        while index < endIndex, let next = self.index(index, offsetBy: 2, limitedBy: endIndex),
              let byte = Int(self[index..<next], radix: 16) {
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}

/// The v1.2 and v1.3 behaviours through the bus: the combined prompt and
/// the failures notice as EvaluatePolicy's options, and a session agent
/// showing a bus caller's prompts (the caller's Passcode then refused, S-68).
final class BusPromptTests: BusTestCase {
    func test_S60_S64_theOptionsAskForTheCombinedPromptAndTheFailuresNotice() throws {
        try startDaemon()
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let client = try client()
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        let options: [String: Any] = ["prompt": ["v": ["s", "combined"]], "notice": ["v": ["s", "failures"]]]
        let request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                      [2, "sudo", options]).first as? String)
        let combined = try client.signal(of: request)
        XCTAssertEqual(combined.args[0] as? String, "biometric-or-passcode")
        XCTAssertEqual((combined.args[1] as? [String: Any])?["attempts-left"] as? Int, 6)
        try admin.ok("sensor uid=0 result=nomatch")
        XCTAssertEqual((try client.signal(of: request).args[1] as? [String: Any])?["attempt"] as? Int, 2)
        XCTAssertNotNil(try client.call(request, BusTestCase.requestInterface, "Passcode", "ay", [bytes("1234")]).values)
        let done = try client.signal(of: request)
        XCTAssertEqual(done.member, "Completed")
        XCTAssertEqual(done.args[1] as? String, "passcode")
        let notice = try XCTUnwrap(done.args[4] as? [String: Any])
        XCTAssertEqual(notice["failed-attempts"] as? Int, 1, "S-64's notice, typed")
        XCTAssertEqual(notice["failed-biometric"] as? Int, 1)
        XCTAssertNotNil(notice["last-failed-at"] as? Int)
        XCTAssertEqual(try client.call(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                       [2, "x", ["prompt": ["v": ["s", "sideways"]]]]).errorName,
                       BusTestCase.errorPrefix + "BadArgument", "the value is the request's to judge")
    }

    func test_S66_S67_S68_aSessionsAgentShowsABusCallersPromptsAndTheCallerCannotAnswerThem() throws {
        let mock = try LogindMock()
        try mock.addSession("c1", uid: 0, user: "root", pid: getpid())
        try startDaemon("[Biometry]\nLogindBus=\(mock.bus)\n")
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let agent = try daemon.connect()
        XCTAssertEqual(try agent.request("a register-agent").status, .ok)
        let client = try client()
        try mock.mapPID(client.pid, to: "c1")
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        XCTAssertNotNil(try client.call(ctx, "org.freedesktop.DBus.Properties", "Set", "ssv",
                                        [BusTestCase.contextInterface, "Prompts", ["v": ["s", "agent"]]]).values)
        let request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                      [2, "unlock your notes", [String: Any]()]).first as? String)
        let routed = try client.signal(of: request)
        XCTAssertEqual(routed.args[0] as? String, "agent", "the caller learns only that an agent prompted (S-69)")
        XCTAssertEqual((routed.args[1] as? [String: Any])?.count, 0)
        let prompt = try agent.next(tag: "a")
        XCTAssertEqual(prompt["kind"], "biometric-or-passcode")
        XCTAssertEqual(prompt["app-uid"], "0")
        XCTAssertEqual(prompt["app-pid"], String(client.pid), "the pid the bus reported: the caller's")
        XCTAssertEqual(prompt["app-process"], String(try XCTUnwrap(try PinnedProcess(pid: client.pid).inode)),
                       "the process pinned when the bus named it")
        XCTAssertEqual(prompt["reason"], "unlock your notes")
        // S-68: the caller may not answer for the agent.
        XCTAssertEqual(try client.call(request, BusTestCase.requestInterface, "Passcode", "ay", [bytes("1234")]).errorName,
                       BusTestCase.errorPrefix + "PermissionDenied")
        XCTAssertEqual(try client.call(request, BusTestCase.requestInterface, "Cancel").errorName,
                       BusTestCase.errorPrefix + "PermissionDenied")
        XCTAssertOK(try agent.request("p passcode request=\(try XCTUnwrap(prompt["request"])) secret=1234"))
        let done = try client.signal(of: request)
        XCTAssertEqual(done.member, "Completed")
        XCTAssertEqual(done.args[1] as? String, "passcode")
    }
}
