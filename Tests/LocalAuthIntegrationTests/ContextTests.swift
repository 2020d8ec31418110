// Contexts: creation, properties, isolation and limits (S-12, S-16, S-17).
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class ContextTests: IntegrationTestCase {
    func testNewContextHasAppleDefaultsAndBiometryNoneUntilCanEvaluate() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let ctx = try newContext(client)
        let other = try newContext(client)
        XCTAssertNotEqual(ctx, other, "every context gets a fresh random id")

        let got = try client.request("g1 get ctx=\(ctx)")
        XCTAssertOK(got)
        XCTAssertEqual(got["state"], "open")
        XCTAssertEqual(got["biometry"], "none", "S-17: none before the first can-evaluate")
        XCTAssertEqual(got["domain-state"], "")
        XCTAssertEqual(got["fallback-title"], "Enter Password")
        XCTAssertEqual(got["cancel-title"], "Cancel")
        XCTAssertEqual(got["reuse-duration"], "0")
        XCTAssertEqual(got["interaction-not-allowed"], "false")

        // S-17: after any can-evaluate, whatever its result, the sensor type.
        let check = try client.request("c1 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(check, -5, "passcodeNotSet")
        XCTAssertEqual(try client.request("g2 get ctx=\(ctx)")["biometry"], "touchID")
        XCTAssertEqual(try client.request("g3 get ctx=\(other)")["biometry"], "none", "per context")
    }

    func testSetStoresValidPropertiesAndGetShowsThem() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let ctx = try newContext(client)
        XCTAssertOK(try client.request(
            "s1 set ctx=\(ctx) fallback-title=\"Use PIN\" cancel-title=Stop reuse-duration=30 interaction-not-allowed=true localized-reason=\"read mail\""))
        let got = try client.request("g1 get ctx=\(ctx)")
        XCTAssertEqual(got["fallback-title"], "Use PIN")
        XCTAssertEqual(got["cancel-title"], "Stop")
        XCTAssertEqual(got["reuse-duration"], "30")
        XCTAssertEqual(got["interaction-not-allowed"], "true")

        // S-16: an empty cancel title means "Cancel"; an empty fallback title hides fallback.
        XCTAssertOK(try client.request("s2 set ctx=\(ctx) cancel-title=\"\" fallback-title=\"\""))
        let cleared = try client.request("g2 get ctx=\(ctx)")
        XCTAssertEqual(cleared["cancel-title"], "Cancel")
        XCTAssertEqual(cleared["fallback-title"], "")

        // S-16: larger reuse durations are accepted.
        XCTAssertOK(try client.request("s3 set ctx=\(ctx) reuse-duration=100000"))
    }

    func testSetWithBadValuesOrUnknownKeysIsBadArgumentAndChangesNothing() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let ctx = try newContext(client)
        for bad in ["reuse-duration=abc", "reuse-duration=-1", "reuse-duration=1.5",
                    "interaction-not-allowed=maybe", "interaction-not-allowed=TRUE", "interaction-not-allowed=1",
                    "colour=blue", "fallback-title=x colour=blue", "cancel-title=Stop reuse-duration=x"] {
            XCTAssertProtocolError(try client.request("b set ctx=\(ctx) \(bad)"), "bad-argument")
        }
        XCTAssertProtocolError(try client.request("b2 set fallback-title=x"), "missing-argument")
        let got = try client.request("g1 get ctx=\(ctx)")
        XCTAssertEqual(got["cancel-title"], "Cancel", "a rejected set changes nothing")
        XCTAssertEqual(got["reuse-duration"], "0")
        XCTAssertOK(try client.request("p1 ping"), "the connection stays usable")
    }

    func testAContextIsInvisibleToAnotherConnectionOfTheSameUID() throws {
        let daemon = try startDaemon()
        let first = try daemon.connect()
        let second = try daemon.connect()
        let ctx = try newContext(first)
        // S-12: the same answer as for an id that never existed.
        for verb in ["get ctx=\(ctx)", "set ctx=\(ctx) cancel-title=x", "can-evaluate ctx=\(ctx) policy=owner",
                     "evaluate ctx=\(ctx) policy=owner reason=x", "invalidate ctx=\(ctx)", "cancel ctx=\(ctx)"] {
            XCTAssertProtocolError(try second.request("x \(verb)"), "unknown-context")
        }
        let madeUp = String(repeating: "ab", count: 16)
        XCTAssertProtocolError(try second.request("y get ctx=\(madeUp)"), "unknown-context")
        XCTAssertProtocolError(try first.request("y get ctx=\(madeUp)"), "unknown-context")
        XCTAssertProtocolError(try first.request("z get ctx=not-hex"), "unknown-context")
        XCTAssertProtocolError(try first.request("w get"), "missing-argument")
        // The owner still has it, untouched.
        XCTAssertEqual(try first.request("g get ctx=\(ctx)")["state"], "open")
    }

    func testMaxContextsPerConnectionRefusesTheThirdNew() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxContextsPerConnection=2"]))
        let client = try daemon.connect()
        _ = try newContext(client)
        let second = try newContext(client)
        XCTAssertProtocolError(try client.request("n3 new"), "limit-exceeded")
        XCTAssertOK(try client.request("p ping"), "limit-exceeded leaves the connection usable")
        // The limit is per connection.
        let other = try daemon.connect()
        _ = try newContext(other)
        _ = second
    }

    func testInvalidateIsIdempotentAndGetShowsInvalidated() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("i1 invalidate ctx=\(ctx)"))
        XCTAssertOK(try client.request("i2 invalidate ctx=\(ctx)"), "S-13: idempotent")
        XCTAssertEqual(try client.request("g get ctx=\(ctx)")["state"], "invalidated")
        XCTAssertLAError(try client.request("c can-evaluate ctx=\(ctx) policy=owner"), -10, "invalidContext")
        XCTAssertLAError(try client.request("e evaluate ctx=\(ctx) policy=owner reason=x"), -10, "invalidContext")
    }
}
