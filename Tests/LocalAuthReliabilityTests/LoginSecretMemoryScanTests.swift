// S-50 and S-77 against the running daemon: the login password it keeps for
// the keyring (issue 30) is in the clear only while it is checked and sealed
// and from the opening of its box until its reply line is written. After a
// password sign-in that seals it and fingerprint sign-ins that release it,
// neither the password nor the base64 of it that the reply carried is
// anywhere in the daemon's writable memory (/proc/PID/mem, as root, as
// SecretMemoryScanTests reads it).
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class LoginSecretMemoryScanTests: ReliabilityTestCase {
    func test_S50_S77_givenALoginPasswordSealedAndReleased_thenTheDaemonsMemoryHoldsNoCopy() throws {
        guard getuid() == 0 else { throw XCTSkip("reading another process's memory needs root") }
        var name = "Keyring-Login-Password"
        while name.utf8.count < 140 { name += ".Keyring-Login-Password" }
        let password = Secrets.make(name + "-140")
        let encoded = Data(password.utf8).base64EncodedString()
        let shadow = TemporaryDirectory()
        try "root:*:19000:0:99999:7:::\nnobody:\(try Yescrypt.hash(secret: password)):19000:0:99999:7:::\n"
            .write(toFile: shadow.path + "/shadow", atomically: true, encoding: .utf8)
        let daemon = try startDaemon(configuration: configuration(passcode: ["Backend=shadow", "ShadowFile=\(shadow.path)/shadow"])
            + "[Keyring]\nReleaseLoginPassword=yes\nServices=login\n[Daemon]\nInsecureTestBackendsForPAM=yes\n")
        guard let pid = daemon.pid else { return XCTFail("no pid") }
        let root = try daemon.connect()
        let user = try daemon.connect(asUID: 65534)
        XCTAssertOK(try user.request("k keyring-enable"), "the user's own consent (S-74)")
        XCTAssertOK(try root.request("a enroll uid=65534"))

        // A password sign-in through `login`: checked and sealed on a worker.
        let typed = try XCTUnwrap(try root.request("n1 new uid=65534 service=login")["ctx"])
        try root.send("e1 evaluate ctx=\(typed) policy=owner reason=keyring")
        XCTAssertEqual(try root.next(tag: "e1")["kind"], "biometric")
        for index in 0..<3 { XCTAssertOK(try root.request("m\(index) sensor uid=65534 result=nomatch")) }
        while try root.next(tag: "e1")["kind"] != "passcode" {}
        XCTAssertOK(try root.request("p passcode ctx=\(typed) secret=\"\(password)\""))
        let signedIn = try root.next(tag: "e1")
        XCTAssertEqual(signedIn["method"], "passcode")
        XCTAssertEqual(signedIn["login-secret"], "typed")
        XCTAssertTrue(try waitUntil { try user.request("s keyring-status")["stored"] == "true" }, "sealed and kept (S-74)")

        // Fingerprint sign-ins, each released once.
        for round in 0..<4 {
            let ctx = try XCTUnwrap(try root.request("n\(round)f new uid=65534 service=login")["ctx"])
            try root.send("f\(round) evaluate ctx=\(ctx) policy=owner reason=keyring")
            XCTAssertEqual(try root.next(tag: "f\(round)")["kind"], "biometric")
            XCTAssertOK(try root.request("s\(round) sensor uid=65534 result=match"))
            XCTAssertEqual(try root.next(tag: "f\(round)")["login-secret"], "offered")
            XCTAssertEqual(try root.request("r\(round) login-secret ctx=\(ctx)")["secret"], encoded, "released (S-75)")
            XCTAssertOK(try root.request("x\(round) invalidate ctx=\(ctx)"))
        }
        XCTAssertOK(try root.request("z ping"), "every line before it is answered")

        var found: [String: Int] = [:]
        try ProcessMemory.forEachWritableMapping(of: String(pid)) { mapping in
            for (what, needle) in [("password", password), ("its base64", encoded)] {
                // Without the first 16 bytes: free() writes its list pointers there.
                let occurrences = Secrets.occurrences(of: Array(needle.utf8.dropFirst(16)), in: mapping)
                if occurrences > 0 { found[what, default: 0] += occurrences }
            }
        }
        XCTAssertEqual(found, [:], "copies of the login password in the daemon's memory after its release (S-50, S-77)")
    }
}
