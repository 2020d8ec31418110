// The right-* verbs (PROTOCOL.md v1.1) on the wire: save, state, authorize
// by an evaluation, the secret released only where authorized, limits, and
// hostile arguments.
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class RightTests: IntegrationTestCase {
    func testASecretIsReleasedOnlyOnTheContextThatAuthorizedIt() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        XCTAssertOK(try client.request("s right-save identifier=com.example.login requirement=biometry secret=c2VjcmV0LTQy"))
        let state = try client.request("st right-state identifier=com.example.login")
        XCTAssertOK(state)
        XCTAssertEqual(state["requirement"], "biometry")
        XCTAssertEqual(state["has-secret"], "true")

        let ctx = try newContext(client)
        XCTAssertProtocolError(try client.request("r0 right-secret ctx=\(ctx) identifier=com.example.login"), "not-authorized")
        try client.send("a right-authorize ctx=\(ctx) identifier=com.example.login reason=\"sign in\"")
        let prompt = try client.next(tag: "a")
        XCTAssertEqual(prompt.status, .prompt)
        XCTAssertEqual(prompt["kind"], "biometric")
        XCTAssertEqual(prompt["reason"], "sign in")
        try sensor(client, "match")
        let authorized = try client.next(tag: "a")
        XCTAssertOK(authorized)
        XCTAssertEqual(authorized["method"], "biometric")
        let secret = try client.request("r1 right-secret ctx=\(ctx) identifier=com.example.login")
        XCTAssertOK(secret)
        XCTAssertEqual(secret["secret"], "c2VjcmV0LTQy")

        // Another context of the same connection has no grant.
        let other = try newContext(client)
        XCTAssertProtocolError(try client.request("r2 right-secret ctx=\(other) identifier=com.example.login"), "not-authorized")
        XCTAssertOK(try client.request("d right-deauthorize ctx=\(ctx) identifier=com.example.login"))
        XCTAssertProtocolError(try client.request("r3 right-secret ctx=\(ctx) identifier=com.example.login"), "not-authorized")
        XCTAssertProtocolError(try client.request("r4 right-secret ctx=\(ctx) identifier=com.example.nothing"), "unknown-right")
        XCTAssertProtocolError(try client.request("r5 right-state identifier=com.example.nothing"), "unknown-right")
    }

    func testAFailedAuthorizationGrantsNothing() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        XCTAssertOK(try client.request("s right-save identifier=x requirement=biometry secret=AAAA"))
        let ctx = try newContext(client)
        try client.send("a right-authorize ctx=\(ctx) identifier=x reason=r")
        _ = try client.next(tag: "a")
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "a"), -2, "userCancel")
        XCTAssertProtocolError(try client.request("r right-secret ctx=\(ctx) identifier=x"), "not-authorized")
        XCTAssertProtocolError(try client.request("a2 right-authorize ctx=\(ctx) identifier=x"), "bad-argument",
                               "S-21: a reason is required, as for evaluate")
    }

    func testHostileArgumentsAndLimits() throws {
        let daemon = try startDaemon(configuration: configuration() + "[Secrets]\nMaxSecretBytes=8\nMaxRightsPerUser=2\n")
        let client = try daemon.connect()
        for bad in ["", "a b", "\"a/b\"", "\"\u{e9}\"", String(repeating: "a", count: 129), "a=b"] {
            let reply = try client.request("b right-save identifier=\(bad.isEmpty ? "\"\"" : bad) requirement=default")
            XCTAssertEqual(reply.status, .err, "identifier \(bad)")
        }
        XCTAssertOK(try client.request("ok right-save identifier=\(String(repeating: "a", count: 128)) requirement=default"))
        XCTAssertProtocolError(try client.request("r right-save identifier=x requirement=face"), "bad-argument")
        XCTAssertProtocolError(try client.request("m right-save identifier=x"), "missing-argument")
        // `=` needs quotes on the wire (PROTOCOL.md's bare values exclude it).
        for bad in ["AAA", "\"AAAAA===\"", "\"AA=A\"", "\"A===\"", "\"AB==\"", "AAA-", "\"AAAA====\"", "\"AA AA\"", "\"AAA=AAAA\""] {
            XCTAssertProtocolError(try client.request("s right-save identifier=x requirement=default secret=\(bad)"),
                                   "bad-argument", "secret \(bad)")
        }
        XCTAssertProtocolError(try client.request("l right-save identifier=x requirement=default secret=AAAAAAAAAAAA"),
                               "limit-exceeded", "9 bytes > MaxSecretBytes=8")
        XCTAssertOK(try client.request("e right-save identifier=x requirement=default secret=\"AAAAAAAAAAA=\""), "8 bytes fit")
        XCTAssertProtocolError(try client.request("n right-save identifier=y requirement=default"), "limit-exceeded",
                               "MaxRightsPerUser=2")
        XCTAssertOK(try client.request("re right-save identifier=x requirement=biometry"), "replacing is no new right")
        XCTAssertEqual(try client.request("st right-state identifier=x")["has-secret"], "false", "the save replaced the secret")
        XCTAssertProtocolError(try client.request("rm right-remove identifier=y"), "unknown-right")
        XCTAssertProtocolError(try client.request("rm2 right-remove"), "missing-argument")
        XCTAssertProtocolError(try client.request("rm3 right-remove all=yes"), "bad-argument")
        XCTAssertProtocolError(try client.request("rm4 right-remove all=true identifier=x"), "bad-argument")
        XCTAssertOK(try client.request("rm5 right-remove all=true"))
        XCTAssertProtocolError(try client.request("st2 right-state identifier=x"), "unknown-right")
        XCTAssertOK(try client.request("n2 right-save identifier=y requirement=default"), "room again")
        XCTAssertProtocolError(try client.request("k right-secret ctx=00 identifier=y"), "unknown-context")
    }

    func testRightsBelongToTheCallersUid() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        try prepareOwner(admin)
        XCTAssertOK(try admin.request("s right-save identifier=shared requirement=default secret=AAAA"))
        let user = try daemon.connect(asUID: 65534)
        XCTAssertProtocolError(try user.request("st right-state identifier=shared"), "unknown-right")
        let ctx = try newContext(user)
        XCTAssertProtocolError(try user.request("r right-secret ctx=\(ctx) identifier=shared"), "unknown-right")
        XCTAssertProtocolError(try user.request("a right-authorize ctx=\(ctx) identifier=shared reason=r"), "unknown-right")
    }

    func testInvalidationEndsTheGrantAndAnotherKeyOpensNothing() throws {
        let directory = NSTemporaryDirectory() + "right-key-\(getpid())-\(tag())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        XCTAssertOK(try client.request("s right-save identifier=x requirement=default secret=AAAA"))
        let ctx = try newContext(client)
        try client.send("a right-authorize ctx=\(ctx) identifier=x reason=r")
        _ = try client.next(tag: "a")
        try sensor(client, "match")
        XCTAssertOK(try client.next(tag: "a"))
        XCTAssertOK(try client.request("r1 right-secret ctx=\(ctx) identifier=x"))
        XCTAssertOK(try client.request("i invalidate ctx=\(ctx)"))
        XCTAssertProtocolError(try client.request("r2 right-secret ctx=\(ctx) identifier=x"), "not-authorized",
                               "S-13: an invalidated context releases nothing")
        // A re-save replaces the right: an earlier grant does not carry over.
        let second = try newContext(client)
        try client.send("b right-authorize ctx=\(second) identifier=x reason=r")
        _ = try client.next(tag: "b")
        try sensor(client, "match")
        XCTAssertOK(try client.next(tag: "b"))
        XCTAssertOK(try client.request("s2 right-save identifier=x requirement=default secret=BBBB"))
        XCTAssertProtocolError(try client.request("r3 right-secret ctx=\(second) identifier=x"), "not-authorized")
    }
}
