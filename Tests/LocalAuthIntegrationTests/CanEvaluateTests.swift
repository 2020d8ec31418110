// canEvaluate (S-17..S-20), over the socket.
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class CanEvaluateTests: IntegrationTestCase {
    func testCanEvaluateChecksInSemanticsOrder() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let ctx = try newContext(client)

        // No passcode (and nothing enrolled): passcodeNotSet wins over biometryNotEnrolled.
        var reply = try client.request("c1 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(reply, -5, "passcodeNotSet")
        XCTAssertEqual(reply["biometry"], "touchID", "every can-evaluate answer carries the biometry type")
        XCTAssertLAError(try client.request("c2 can-evaluate ctx=\(ctx) policy=owner"), -5, "passcodeNotSet")

        // Passcode, no enrollment.
        try prepareOwner(client, enroll: false)
        reply = try client.request("c3 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(reply, -7, "biometryNotEnrolled")
        XCTAssertEqual(reply["biometry"], "touchID")
        reply = try client.request("c4 can-evaluate ctx=\(ctx) policy=owner")
        XCTAssertOK(reply)
        XCTAssertEqual(reply["biometry"], "touchID", "S-18: owner succeeds on the passcode alone")

        // Enrolled.
        let enrolled = try client.request("e1 enroll uid=0")
        XCTAssertOK(enrolled)
        reply = try client.request("c5 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertOK(reply)
        XCTAssertEqual(reply["biometry"], "touchID")
        XCTAssertTrue(isHexToken(reply["domain-state"]), "S-19: domain state, at least 16 bytes hex: \(reply)")
        XCTAssertEqual(reply["domain-state"], enrolled["domain-state"])
        XCTAssertEqual(try client.request("g1 get ctx=\(ctx)")["domain-state"], enrolled["domain-state"],
                       "the context remembers the domain state it was told (evaluatedPolicyDomainState)")

        // Apple's long name and the number are the same policy.
        let long = try client.request("c6 can-evaluate ctx=\(ctx) policy=deviceOwnerAuthenticationWithBiometrics")
        XCTAssertOK(long)
        XCTAssertEqual(long["domain-state"], reply["domain-state"], "S-10: stable while the enrolled set is unchanged")
        XCTAssertOK(try client.request("c7 can-evaluate ctx=\(ctx) policy=1"))
        XCTAssertOK(try client.request("c8 can-evaluate ctx=\(ctx) policy=deviceOwnerAuthentication"))

        // S-10: another enrollment changes the domain state.
        XCTAssertOK(try client.request("e2 enroll uid=0 template=thumb"))
        let changed = try client.request("c9 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertOK(changed)
        XCTAssertNotEqual(changed["domain-state"], reply["domain-state"])
    }

    func testPolicyFiveIsBadArgumentAndPolicyThreeIsCompanionNotAvailable() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertProtocolError(try client.request("w1 can-evaluate ctx=\(ctx) policy=wrist"), "bad-argument")
        XCTAssertProtocolError(try client.request("w2 can-evaluate ctx=\(ctx) policy=5"), "bad-argument")
        XCTAssertProtocolError(try client.request("w3 can-evaluate ctx=\(ctx) policy=sideways"), "bad-argument")
        XCTAssertProtocolError(try client.request("w4 can-evaluate ctx=\(ctx)"), "missing-argument")

        let companion = try client.request("k1 can-evaluate ctx=\(ctx) policy=companion")
        XCTAssertLAError(companion, -11, "companionNotAvailable")
        XCTAssertEqual(companion["biometry"], "touchID")
        XCTAssertLAError(try client.request("k2 can-evaluate ctx=\(ctx) policy=3"), -11, "companionNotAvailable")
        // Policy 4 behaves as policy 1.
        XCTAssertOK(try client.request("k3 can-evaluate ctx=\(ctx) policy=biometrics-or-companion"))
    }

    func testWithoutASensorBiometricsIsNotAvailableButOwnerWorks() throws {
        let daemon = try startDaemon(extraArguments: ["--biometry", "none"])
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("h hello")["biometry"], "none")
        try prepareOwner(client, enroll: false)
        let ctx = try newContext(client)
        let reply = try client.request("c1 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(reply, -6, "biometryNotAvailable")
        XCTAssertEqual(reply["biometry"], "none")
        let owner = try client.request("c2 can-evaluate ctx=\(ctx) policy=owner")
        XCTAssertOK(owner)
        XCTAssertEqual(owner["biometry"], "none")
        XCTAssertEqual(try client.request("g get ctx=\(ctx)")["biometry"], "none")
    }

    func testCanEvaluateNeverChangesCounters() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        let before = try client.request("s1 status")
        for index in 0..<5 { XCTAssertOK(try client.request("c\(index) can-evaluate ctx=\(ctx) policy=biometrics")) }
        let after = try client.request("s2 status")
        XCTAssertEqual(after["biometric-failures"], before["biometric-failures"])
        XCTAssertEqual(after["passcode-failures"], before["passcode-failures"])
        XCTAssertEqual(after["locked-out"], "false")
    }
}
