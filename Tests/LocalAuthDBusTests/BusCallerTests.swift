// S-71 and S-14 over the bus: a caller's objects and signals are its own,
// and a name that leaves the bus is a connection that closes.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class BusCallerTests: BusTestCase {
    private func prepare() throws -> Admin {
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        return admin
    }

    private func evaluation(_ client: BusClient, policy: Int = 1) throws -> (context: String, request: String) {
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        let request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                      [policy, "unlock", [String: Any]()]).first as? String)
        XCTAssertEqual(try client.signal(of: request).member, "Prompt")
        return (ctx, request)
    }

    func test_S71_anotherNameOfTheSameUidFindsNoObjectOfTheCaller() throws {
        try startDaemon()
        _ = try prepare()
        let owner = try client()
        let other = try client()
        let (ctx, request) = try evaluation(owner)
        let unknown = "org.freedesktop.DBus.Error.UnknownObject"
        XCTAssertEqual(try other.call(ctx, BusTestCase.contextInterface, "CanEvaluatePolicy", "u", [1]).errorName, unknown)
        XCTAssertEqual(try other.call(ctx, BusTestCase.contextInterface, "Invalidate").errorName, unknown)
        XCTAssertEqual(try other.call(ctx, "org.freedesktop.DBus.Properties", "GetAll", "s", [BusTestCase.contextInterface]).errorName,
                       unknown)
        XCTAssertEqual(try other.call(ctx, "org.freedesktop.DBus.Introspectable", "Introspect").errorName, unknown)
        XCTAssertEqual(try other.call(request, BusTestCase.requestInterface, "Cancel").errorName, unknown)
        XCTAssertEqual(try other.call(request, BusTestCase.requestInterface, "Passcode", "ay", [bytes("1234")]).errorName, unknown)
        // The same answer as for a path that never existed (S-12).
        XCTAssertEqual(try other.call(BusTestCase.root + "/context/00000000000000000000000000000000",
                                      BusTestCase.contextInterface, "Invalidate").errorName, unknown)
        // The owner's evaluation is untouched, and its owner still reaches it.
        XCTAssertNotNil(try owner.call(request, BusTestCase.requestInterface, "Cancel").values)
        XCTAssertEqual(try owner.signal(of: request).args[3] as? String, "userCancel")
    }

    func test_S71_promptsAndResultsAreSentToTheCallerAlone() throws {
        try startDaemon()
        let admin = try prepare()
        let listener = try client()  // subscribed to every signal it can receive
        let owner = try client()
        let (_, request) = try evaluation(owner)
        try admin.ok("sensor uid=0 result=match")
        XCTAssertEqual(try owner.signal(of: request).member, "Completed")
        // Broadcast signals sent before the daemon's answer to this ping
        // would have reached the listener before that answer.
        try listener.ping()
        let seen = listener.lines.pending.filter { $0.hasPrefix("signal ") && $0.contains(BusTestCase.root) }
        XCTAssertEqual(seen, [], "no other bus client sees a prompt or a result")
    }

    func test_S14_aNameThatLeavesMidPromptEndsItsEvaluationAndItsContexts() throws {
        try startDaemon()
        let admin = try prepare()
        let client = try client()
        let (ctx, _) = try evaluation(client)
        let id = String(ctx.split(separator: "/").last!)
        client.close()  // SIGKILL: the name leaves the bus
        XCTAssertTrue(waitUntil { (try? admin.request("status"))?["contexts"] == "0" }, "the context ended with its name")
        let events = try events()
        let invalidated = events.first { $0["type"] as? String == "context-invalidated" && $0["ctx"] as? String == id }
        XCTAssertEqual(invalidated?["reason"] as? String, "disconnect")
        let failed = events.first { $0["type"] as? String == "evaluation-failed" && $0["ctx"] as? String == id }
        XCTAssertNotNil(failed, "the evaluation has its one final answer (S-33)")
        // No prompt waits any more: a reading has nobody to go to.
        XCTAssertEqual(try admin.request("sensor uid=0 result=match")["name"], "bad-state")
        // The daemon keeps serving the bus.
        let next = try self.client()
        XCTAssertEqual(try next.values(BusTestCase.root, BusTestCase.service, "CanEvaluatePolicy", "u", [1]).first as? Bool, true)
    }
}
