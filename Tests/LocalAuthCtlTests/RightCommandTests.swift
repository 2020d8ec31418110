// `localauthctl right list|show|remove` as whole command lines against a real
// daemon: the caller's own rights, the public key as PEM that openssl reads
// and whose SHA-256 the log's right-key-created holds, -o json, removal,
// and the usage errors (exit 2) and refusals (exit 3).
import Foundation
import LocalAuthTestSupport
import XCTest

final class RightCommandTests: CtlTestCase {
    func testListShowAndRemoveTheCallersRights() throws {
        var result = try ctl(["right", "list"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertEqual(result.out, "No rights.\n")
        try admin.ok("right-save identifier=com.example.login requirement=biometry-current-set secret=AAAA")
        try admin.ok("right-save identifier=a.first requirement=default")

        result = try ctl(["right", "list"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertEqual(result.out, """
            IDENTIFIER         REQUIREMENT           SECRET  KEY
            a.first            default               no      P-256
            com.example.login  biometry-current-set  yes     P-256

            """)
        result = try ctl(["right", "list", "-o", "json"] + socket)
        let lines = result.out.split(separator: "\n").map { jsonObject(String($0)) }
        XCTAssertEqual(lines.map { $0["identifier"] as? String }, ["a.first", "com.example.login"])
        XCTAssertEqual(lines.map { $0["has_secret"] as? Bool }, [false, true])
        XCTAssertEqual(lines.map { $0["has_key"] as? Bool }, [true, true])

        let publicKey = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(admin.ok("right-public-key identifier=com.example.login")["public-key"])))
        result = try ctl(["right", "show", "com.example.login"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertTrue(result.out.hasPrefix("Identifier:  com.example.login\nRequirement: biometry-current-set\nSecret:      yes\nKey:         P-256, public key SHA-256 "), result.out)
        let pem = String(result.out[result.out.range(of: "-----BEGIN PUBLIC KEY-----")!.lowerBound...])
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") {
            let directory = TemporaryDirectory()
            try pem.write(toFile: directory.path + "/key.pem", atomically: true, encoding: .utf8)
            let (status, text, err) = try runToCompletion("/usr/bin/openssl", ["ec", "-pubin", "-in", directory.path + "/key.pem", "-noout", "-text"])
            XCTAssertEqual(status, 0, err)
            XCTAssertTrue(text.contains("prime256v1"), text)
        }
        result = try ctl(["right", "show", "com.example.login", "-o", "json"] + socket)
        let shown = jsonObject(result.out)
        XCTAssertEqual(shown["public_key"] as? String, publicKey.base64EncodedString())
        XCTAssertEqual((shown["public_key_sha256"] as? String)?.count, 64)
        XCTAssertTrue(result.out.contains(shown["public_key_sha256"] as! String))
        XCTAssertEqual(shown["requirement"] as? String, "biometry-current-set")

        result = try ctl(["right", "remove", "a.first"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertEqual(result.out, "Removed the right 'a.first', its secret and its key.\n")
        result = try ctl(["right", "show", "a.first"] + socket)
        XCTAssertEqual(result.code, 3, "refused: unknown-right")
        XCTAssertTrue(result.err.contains("(unknown-right)"), result.err)
        result = try ctl(["right", "remove", "--all", "-o", "json"] + socket)
        XCTAssertEqual(result.out, "{\"removed\":\"all\"}\n")
        XCTAssertEqual(try ctl(["right", "list"] + socket).out, "No rights.\n")
    }

    func testUsageErrors() throws {
        for (arguments, message) in [(["right"], "missing the action"), (["right", "frob"], "invalid action 'frob'"),
                                     (["right", "show"], "missing the IDENTIFIER"), (["right", "list", "x"], "unexpected argument 'x'"),
                                     (["right", "list", "--all"], "--all applies to 'right remove' only"),
                                     (["right", "remove", "a", "b"], "unexpected argument 'b'")] {
            let result = try ctl(arguments + socket)
            XCTAssertEqual(result.code, 2, "\(arguments)")
            XCTAssertTrue(result.err.contains(message), "\(arguments): \(result.err)")
        }
        let help = try ctl(["right", "--help"])
        XCTAssertEqual(help.code, 0)
        XCTAssertTrue(help.out.hasPrefix("Usage: localauthctl right [--all] [-o text|json] [--socket PATH] list | show IDENTIFIER | remove IDENTIFIER|--all\n"), help.out)
    }
}
