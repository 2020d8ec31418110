// S-51 with AdminGroup against the real daemon: the group lookup runs off
// the event loop (AdminRights.swift), so an admin request may wait for its
// answer; it must still be judged right, and its connection's replies keep
// their order. (A member removed from the group: HardeningTests.)
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class AdminGroupTests: IntegrationTestCase {
    func test_S51_aUserOutsideAdminGroupIsRefusedAnotherUsersStatus() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=nogroup"]))
        // uid 1 (daemon) exists and is not in nogroup.
        let outsider = try daemon.connect(asUID: 1)
        XCTAssertProtocolError(try outsider.request("a1 status uid=0"), "permission-denied")
        XCTAssertProtocolError(try outsider.request("a2 stats"), "permission-denied")
        XCTAssertOK(try outsider.request("a3 status"), "its own status needs no rights")
        let member = try daemon.connect(asUID: 65534)
        XCTAssertOK(try member.request("m1 status uid=0"), "nobody's primary group is nogroup")
    }

    func test_S51_linesPipelinedBehindAnAdminRequestAreAnsweredInOrder() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=nogroup"]))
        let member = try daemon.connect(asUID: 65534)
        let outsider = try daemon.connect(asUID: 1)
        // One write, straight after connecting: the first line may wait for the lookup.
        try member.sendRaw(Array("p1 stats\np2 ping\np3 status uid=0\np4 ping\n".utf8))
        try outsider.sendRaw(Array("o1 stats\no2 ping\n".utf8))
        var tags: [String] = []
        for _ in 0..<4 {
            let line = try XCTUnwrap(try member.nextLine())
            tags.append(String(line.prefix { $0 != " " }))
            XCTAssertTrue(line.contains(" OK"), line)
        }
        XCTAssertEqual(tags, ["p1", "p2", "p3", "p4"], "each connection's replies in its order")
        XCTAssertProtocolError(try outsider.next(tag: "o1"), "permission-denied")
        XCTAssertOK(try outsider.next(tag: "o2"))
    }

    /// S-50: a set-passcode for another uid waits for the AdminGroup answer
    /// (when the lookup asked at connect time is slower than the line) with
    /// its secret held as SecretBytes, as the scanner made it; it must
    /// set exactly that secret when it runs.
    func test_S50_aSetPasscodeThatWaitsForTheAdminLookupSetsItsSecret() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=nogroup"]))
        let member = try daemon.connect(asUID: 65534)
        let passcode = #"Park3d "quoted" one"#
        let quoted = #""Park3d \"quoted\" one""#  // the wire form of `passcode`
        try member.sendRaw(Array("s1 set-passcode uid=1 secret=\(quoted)\np1 ping\n".utf8))
        XCTAssertOK(try member.next(tag: "s1"))
        XCTAssertOK(try member.next(tag: "p1"))
        // uid 1 proves it: an evaluation answered by exactly that passcode.
        let user = try daemon.connect(asUID: 1)
        let ctx = try XCTUnwrap(try user.request("n1 new")["ctx"])
        try user.send("ev evaluate ctx=\(ctx) policy=owner reason=parked")
        XCTAssertEqual(try user.next(tag: "ev")["kind"], "passcode")
        XCTAssertOK(try user.request("w1 passcode ctx=\(ctx) secret=\"Park3d quoted one\""))
        XCTAssertEqual(try user.next(tag: "ev")["kind"], "passcode", "a near miss is wrong")
        XCTAssertOK(try user.request("w2 passcode ctx=\(ctx) secret=\(quoted)"))
        XCTAssertEqual(try user.next(tag: "ev")["method"], "passcode", "the passcode is \(passcode)")
    }
}
