// S-72: hostile bus callers. Each shape the API refuses is answered with
// the D-Bus error its documentation names (the XML's comments), records
// nothing, and leaves the daemon serving everyone else.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class BusHostileTests: BusTestCase {
    private let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    /// Another caller is still served, and the hostile one too.
    private func stillServing(_ clients: BusClient..., answer: String = "passcodeNotSet",
                              file: StaticString = #filePath, line: UInt = #line) throws {
        for client in clients + [try self.client()] {
            let check = try client.call(BusTestCase.root, BusTestCase.service, "CanEvaluatePolicy", "u", [2])
            XCTAssertEqual(check.values?[3] as? String, answer, "served: \(check)", file: file, line: line)
        }
    }

    func test_S72_shapesTheAPIDoesNotTakeAreInvalidArgs() throws {
        try startDaemon()
        let client = try client()
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        let evaluate = { (args: [Any], signature: String) throws -> BusReply in
            try client.call(ctx, BusTestCase.contextInterface, "EvaluatePolicy", signature, args)
        }
        // Another signature.
        XCTAssertEqual(try client.call(ctx, BusTestCase.contextInterface, "CanEvaluatePolicy", "s", ["1"]).errorName, invalidArgs)
        XCTAssertEqual(try evaluate([1, "why"], "us").errorName, invalidArgs)
        // Options: unknown keys, values of another type, too many, nested.
        XCTAssertEqual(try evaluate([1, "why", ["evil": ["v": ["s", "x"]]]], "usa{sv}").errorName, invalidArgs)
        XCTAssertEqual(try evaluate([1, "why", ["prompt": ["v": ["u", 1]]]], "usa{sv}").errorName, invalidArgs)
        var many: [String: Any] = [:]
        for index in 0..<1000 { many["key\(index)"] = ["v": ["s", String(repeating: "x", count: 100)]] }
        XCTAssertEqual(try evaluate([1, "why", many], "usa{sv}").errorName, invalidArgs)
        var nested: [String: Any] = [:]
        for index in 0..<500 { nested["k\(index)"] = ["v": ["s", String(repeating: "y", count: 200)]] }
        XCTAssertEqual(try evaluate([1, "why", ["prompt": ["v": ["a{sv}", nested]]]], "usa{sv}").errorName, invalidArgs)
        // Strings no request line can carry.
        XCTAssertEqual(try evaluate([1, String(repeating: "r", count: 100_000), [String: Any]()], "usa{sv}").errorName, invalidArgs)
        XCTAssertEqual(try evaluate([1, "bell \u{7}", [String: Any]()], "usa{sv}").errorName, invalidArgs)
        XCTAssertEqual(try client.call(ctx, "org.freedesktop.DBus.Properties", "Set", "ssv",
                                       [BusTestCase.contextInterface, "LocalizedReason", ["v": ["s", "esc \u{1b}[2J"]]]).errorName,
                       invalidArgs)
        XCTAssertEqual(try client.call(BusTestCase.root, BusTestCase.service, "SaveRight", "ssay",
                                       ["a.b", "default", ["hex": String(repeating: "ab", count: 100_000)]]).errorName, invalidArgs)
        // None of it was a request: nothing recorded but the context.
        XCTAssertEqual(try events().filter { $0["type"] as? String == "evaluation-started" }.count, 0)
        try stillServing(client)
    }

    func test_S72_aPasscodeThatIsNotTextIsRefusedUncheckedAndUncounted() throws {
        try startDaemon()
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        let client = try client()
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        let request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                      [2, "why", [String: Any]()]).first as? String)
        XCTAssertEqual(try client.signal(of: request).args[0] as? String, "passcode", "no biometry enrolled: the passcode")
        for bad in ["ff00", "00", "313233341b"] {
            XCTAssertEqual(try client.call(request, BusTestCase.requestInterface, "Passcode", "ay", [["hex": bad]]).errorName,
                           invalidArgs, bad)
        }
        XCTAssertEqual(try admin.request("status")["passcode-failures"], "0", "nothing was checked or counted")
        XCTAssertNotNil(try client.call(request, BusTestCase.requestInterface, "Passcode", "ay", [bytes("1234")]).values)
        XCTAssertEqual(try client.signal(of: request).args[1] as? String, "passcode")
    }

    func test_S72_objectsAndMembersThatDoNotExist() throws {
        try startDaemon()
        let client = try client()
        let unknown = "org.freedesktop.DBus.Error.UnknownObject"
        for path in [BusTestCase.root + "/context/nothex", BusTestCase.root + "/request/01", BusTestCase.root + "/request/9",
                     BusTestCase.root + "/user/1000", BusTestCase.root + "/elsewhere"] {
            XCTAssertEqual(try client.call(path, BusTestCase.contextInterface, "Invalidate").errorName, unknown, path)
            XCTAssertEqual(try client.call(path, "org.freedesktop.DBus.Introspectable", "Introspect").errorName, unknown, path)
        }
        XCTAssertEqual(try client.call(BusTestCase.root, BusTestCase.service, "Evaluate").errorName,
                       "org.freedesktop.DBus.Error.UnknownMethod")
        XCTAssertEqual(try client.call(BusTestCase.root, BusTestCase.contextInterface, "Invalidate").errorName,
                       "org.freedesktop.DBus.Error.UnknownInterface")
        XCTAssertEqual(try client.call(BusTestCase.root + "/user/self", "org.freedesktop.DBus.Properties", "Set", "ssv",
                                       [BusTestCase.environmentInterface, "Uid", ["v": ["u", 0]]]).errorName,
                       "org.freedesktop.DBus.Error.PropertyReadOnly")
        try stillServing(client)
    }

    func test_S72_aFloodOfCallsIsBoundedPerNameAndEveryCallIsAnswered() throws {
        try startDaemon()
        let client = try client()
        let daemonPID = try XCTUnwrap(daemon.pid)
        // Held while the calls queue up, so that the daemon reads them all
        // in one turn: at most 32 of one name wait for their answers.
        kill(daemonPID, SIGSTOP)
        var tags: [String] = []
        for _ in 0..<100 { tags.append(try client.send(BusTestCase.root, BusTestCase.service, "CreateContext")) }
        // The bus answers this client's call to the bus itself only after
        // it routed the 100 calls the client sent before it.
        try client.busRoundTrip()
        kill(daemonPID, SIGCONT)
        var created = 0, limited = 0, other: [BusReply] = []
        for tag in tags {
            let reply = try client.answer(tag)
            if reply.values != nil {
                created += 1
            } else if reply.errorName == "org.freedesktop.DBus.Error.LimitsExceeded" {
                limited += 1
            } else {
                other.append(reply)
            }
        }
        XCTAssertEqual(other.count, 0, "every call is answered with a context or LimitsExceeded: \(other)")
        XCTAssertEqual(created + limited, 100)
        XCTAssertGreaterThanOrEqual(created, 32, "at least the 32 that may wait")
        XCTAssertGreaterThan(limited, 0, "the rest of one turn's flood is refused")
        try stillServing(client)

        // A flood of evaluations of one context: one request, the rest Busy
        // (S-22). Enrolled, so that the first waits at its prompt: one that
        // ended at once (biometryNotEnrolled) would free the context for the
        // next, as many times as the log's fsyncs fit in the flood.
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        var evaluations: [String] = []
        for _ in 0..<20 {
            evaluations.append(try client.send(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                               [1, "flood", [String: Any]()]))
        }
        let answers = try evaluations.map { try client.answer($0) }
        XCTAssertEqual(answers.filter { $0.values != nil }.count, 1)
        XCTAssertEqual(answers.filter { $0.errorName == BusTestCase.errorPrefix + "Busy" }.count, 19)
        try stillServing(client, answer: "")
    }

    func test_S70_aCallerOverMaxConnectionsPerUserIsRefusedAndTheOthersServed() throws {
        try startDaemon("[Daemon]\nMaxConnectionsPerUser=2\n")
        let first = try client(), second = try client()
        _ = try first.values(BusTestCase.root, BusTestCase.service, "CreateContext")
        _ = try second.values(BusTestCase.root, BusTestCase.service, "CreateContext")
        let third = try client()
        XCTAssertEqual(try third.call(BusTestCase.root, BusTestCase.service, "CreateContext").errorName,
                       BusTestCase.errorPrefix + "LimitExceeded", "a bus caller is a connection of its uid (S-70)")
        first.close()
        XCTAssertTrue(waitUntil { (try? third.call(BusTestCase.root, BusTestCase.service, "CreateContext"))?.values != nil },
                      "the name that left freed its connection")
    }
}
