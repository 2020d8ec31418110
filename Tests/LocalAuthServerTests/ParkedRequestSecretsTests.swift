// S-50 for parked requests (EnrollmentParking.swift, AdminLookups.swift): a
// set-passcode waiting for an AdminGroup lookup or fprintd is kept as the
// server's scanner made it, its secrets in wipeable SecretBytes and none in
// its Strings, and runs with them exactly as the line gave them.
import LocalAuthProtocol
@testable import LocalAuthServer
import XCTest

final class ParkedRequestSecretsTests: XCTestCase {
    /// The line as the server parses it (`requestWithSecretsApart`).
    private func serverRequest(_ line: String) throws -> Request {
        var scanner = RequestScanner()
        var line = line
        return try line.withUTF8 { bytes throws -> Request in
            if let failure = scanner.scan(bytes) {
                XCTFail("the test's line does not parse: \(failure)")
                throw CancellationError()
            }
            return scanner.requestWithSecretsApart
        }
    }

    func test_S50_givenAParkedSetPasscode_thenItsRequestHoldsNoSecretInAString_andItsBytesAreTheLines() throws {
        let request = try serverRequest(#"s1 set-passcode secret="N3w Passcode\"!" old-secret=0ld-One uid=1001"#)
        let parked = ParkedRequest(connection: try ReplyGateTests.connection().id, request: request, stamp: 7)
        // The keys and their order stay (the verb table checks them), the values are apart.
        XCTAssertEqual(parked.request.arguments.map(\.key), ["secret", "old-secret", "uid"])
        XCTAssertEqual(parked.request.arguments.value(for: "secret"), "")
        XCTAssertEqual(parked.request.arguments.value(for: "old-secret"), "")
        XCTAssertEqual(parked.request.arguments.value(for: "uid"), "1001")
        XCTAssertFalse(String(describing: parked.request).contains("N3w"), "\(parked.request)")
        XCTAssertFalse(String(describing: parked.request).contains("0ld-One"), "\(parked.request)")
        // What the verb reads when it runs: the bytes, escapes decoded once.
        XCTAssertEqual(parked.request.secret("secret")?.copy(), Array(#"N3w Passcode"!"#.utf8))
        XCTAssertEqual(parked.request.secret("old-secret")?.copy(), Array("0ld-One".utf8))
        XCTAssertNil(parked.request.secrets.value(for: "uid"), "uid= is no secret")
        XCTAssertEqual(parked.stamp, 7)
    }

    func test_S50_givenARequestWithoutSecrets_thenTheServersFormIsTheStringForm() throws {
        let line = "c1 can-evaluate ctx=0123456789abcdef0123456789abcdef policy=owner"
        guard case .request(let strings) = Request.parse(line) else { return XCTFail("does not parse") }
        XCTAssertEqual(try serverRequest(line), strings)
    }

    func test_S50_givenAnEmptySecret_thenItIsHeldAsNoBytes_forTheCoreToJudge() throws {
        let request = try serverRequest("p1 passcode ctx=0123456789abcdef0123456789abcdef secret=\"\"")
        XCTAssertEqual(request.secrets.keys, ["secret"])
        XCTAssertEqual(request.secret("secret")?.count, 0)
    }
}
