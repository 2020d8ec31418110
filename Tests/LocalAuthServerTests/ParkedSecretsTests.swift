// S-50 for parked requests (ParkedSecrets.swift): a set-passcode waiting for
// an AdminGroup lookup or fprintd keeps its secrets as wipeable SecretBytes,
// not in its Request's Strings, and runs with them put back exactly.
import LocalAuthProtocol
@testable import LocalAuthServer
import XCTest

final class ParkedSecretsTests: XCTestCase {
    private func parse(_ line: String) throws -> Request {
        guard case .request(let request) = Request.parse(line) else {
            XCTFail("the test's line does not parse: \(line)")
            throw CancellationError()
        }
        return request
    }

    func test_S50_givenAParkedSetPasscode_thenItsRequestHoldsNoSecret_andRunsWithThemPutBack() throws {
        let original = try parse(#"s1 set-passcode secret="N3w Passcode\"!" old-secret=0ld-One uid=1001"#)
        var held = original
        let secrets = ParkedSecrets(takingFrom: &held)
        XCTAssertFalse(secrets.isEmpty)
        // Held while parked: the keys and their order stay, the values are gone.
        XCTAssertEqual(held.arguments.map(\.key), ["secret", "old-secret", "uid"])
        XCTAssertEqual(held.arguments.value(for: "secret"), "")
        XCTAssertEqual(held.arguments.value(for: "old-secret"), "")
        XCTAssertEqual(held.arguments.value(for: "uid"), "1001")
        XCTAssertFalse(String(describing: held).contains("N3w"), "\(held)")
        XCTAssertFalse(String(describing: held).contains("0ld-One"), "\(held)")
        // Run: the request exactly as it was read (escapes decoded once).
        let restored = secrets.restored(into: held)
        XCTAssertEqual(restored, original)
        XCTAssertEqual(restored.arguments.value(for: "secret"), #"N3w Passcode"!"#)
    }

    func test_S50_givenAnAdminLookupToWaitFor_whenASetPasscodeIsParked_thenTheWaiterHoldsItsSecretsApart() throws {
        let original = try parse("s2 set-passcode secret=Parked-Secret-1 uid=1001")
        let parked = ParkedRequest(connection: try ReplyGateTests.connection(), request: original, stamp: 7)
        XCTAssertEqual(parked.held.arguments.value(for: "secret"), "")
        XCTAssertFalse(parked.secrets.isEmpty)
        // What the server dispatches when the answer is in.
        XCTAssertEqual(parked.request, original)
        XCTAssertEqual(parked.stamp, 7)
    }

    func test_S50_givenARequestWithoutSecrets_thenParkingChangesNothing() throws {
        let original = try parse("c1 can-evaluate ctx=0123456789abcdef0123456789abcdef policy=owner")
        var held = original
        let secrets = ParkedSecrets(takingFrom: &held)
        XCTAssertTrue(secrets.isEmpty)
        XCTAssertEqual(held, original)
        XCTAssertEqual(secrets.restored(into: held), original)
    }

    func test_S50_givenAnEmptySecret_thenItIsPutBackEmpty_forTheCoreToRefuse() throws {
        let original = try parse("p1 passcode ctx=0123456789abcdef0123456789abcdef secret=\"\"")
        var held = original
        let secrets = ParkedSecrets(takingFrom: &held)
        XCTAssertEqual(secrets.restored(into: held), original)
    }
}
