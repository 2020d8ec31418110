// S-50 in the codec: the server's scanner (`requestWithSecretsApart`) holds
// the values of `Verb.secretKeys` as SecretBytes, decoded from the line's
// bytes, and no String of them. Its secrets must be exactly the values the
// String path (`Request.parse`) gives, every other part of the request the
// same, and a bad line the same error as before.
import LocalAuthTestSupport
import XCTest
@testable import LocalAuthProtocol

final class SecretArgumentTests: XCTestCase {
    /// The server's form of `line`, or the scan's failure.
    private func apart(_ line: [UInt8]) -> (Request?, RequestFailure?) {
        line.withUnsafeBufferPointer { buffer in
            var scanner = RequestScanner()
            if let failure = scanner.scan(buffer) { return (nil, failure) }
            return (scanner.requestWithSecretsApart, nil)
        }
    }

    /// The server's form agrees with the String form: same tag, verb, keys
    /// in order and non-secret values; secret keys hold "" and their bytes
    /// are the String form's values.
    private func assertAgrees(_ line: [UInt8], _ note: String = "", file: StaticString = #filePath, line number: UInt = #line) {
        let (server, failure) = apart(line)
        switch Request.parse(line) {
        case .failure(let expected):
            XCTAssertEqual(failure, expected, "the same error: \(note)", file: file, line: number)
            XCTAssertNil(server, file: file, line: number)
        case .request(let strings):
            guard let server else { return XCTFail("the server's scan refused a line: \(note)", file: file, line: number) }
            XCTAssertEqual(server.tag, strings.tag, note, file: file, line: number)
            XCTAssertEqual(server.verb, strings.verb, note, file: file, line: number)
            XCTAssertEqual(server.arguments.map(\.key), strings.arguments.map(\.key), note, file: file, line: number)
            var secretKeys: [String] = []
            for (held, given) in zip(server.arguments, strings.arguments) {
                if Verb.secretKeys.contains(given.key) {
                    secretKeys.append(given.key)
                    XCTAssertEqual(held.value, "", "no String of a secret: \(note)", file: file, line: number)
                    XCTAssertEqual(server.secrets.value(for: given.key)?.copy(), Array(given.value.utf8), note, file: file, line: number)
                    XCTAssertEqual(server.secret(given.key)?.copy(), Array(given.value.utf8), note, file: file, line: number)
                } else {
                    XCTAssertEqual(held.value, given.value, note, file: file, line: number)
                }
            }
            XCTAssertEqual(server.secrets.keys, secretKeys, note, file: file, line: number)
            XCTAssertEqual(strings.secrets.keys, [], "the String form holds none apart", file: file, line: number)
        }
    }

    func test_S50_givenValidLinesWithSecrets_thenTheBytesHeldApartAreTheStringPathsValues() {
        let lines = [
            "p1 passcode ctx=0123456789abcdef0123456789abcdef secret=1234",
            #"p2 passcode ctx=0123456789abcdef0123456789abcdef secret="with space and \"quote\" \\ \n\r\t""#,
            #"p3 passcode secret="" ctx=00"#,
            "s1 set-passcode secret=pässwörd✓Ωmega old-secret=0ld uid=1001",
            #"s2 set-passcode old-secret="a\"b" secret="c\\d""#,
            #"r1 right-save identifier=x requirement=default secret="AAECAw==""#,
            "u1 frobnicate secret=UnknownVerbSecret extra=1",
            "q1 ping",
            "c1 can-evaluate ctx=0123456789abcdef0123456789abcdef policy=owner",
            "k1 set secrets=not-a-secret-key secre=neither old-secrets=nor-this",
        ]
        for line in lines { assertAgrees(Array(line.utf8), line) }
        let (request, _) = apart(Array("k1 set secrets=a secre=b old-secrets=c".utf8))
        XCTAssertEqual(request?.secrets.keys, [], "only the exact keys are secrets")
    }

    func test_S50_givenBadLinesWithSecrets_thenTheErrorsAreTheStringPaths() {
        let cases: [(String, ProtocolErrorName, String)] = [
            (#"p1 passcode secret="Unterminated0"#, .badSyntax, "Unterminated quoted value"),
            (#"p2 passcode secret="bad\escape""#, .badSyntax, "Unknown escape"),
            (#"p3 passcode secret="ends in a backslash\"#, .badSyntax, "Unterminated quoted value"),
            ("p4 passcode secret=a=b", .badSyntax, "Bad character in the value"),
            ("p5 passcode secret=", .badSyntax, "Empty value"),
            ("p6 passcode secret=x secret=y", .badArgument, "appears more than once"),
            (#"p7 passcode secret="x"y"#, .badSyntax, "Expected a space after the quoted value"),
        ]
        for (line, name, message) in cases {
            let (request, failure) = apart(Array(line.utf8))
            XCTAssertNil(request, line)
            XCTAssertEqual(failure?.error.name, name, line)
            XCTAssertEqual(failure?.tag, String(line.prefix(2)), line)
            XCTAssertTrue(failure?.error.message.contains(message) == true, "\(line): \(String(describing: failure))")
            assertAgrees(Array(line.utf8), line)
        }
        // Invalid UTF-8 and a NUL inside a secret: refused before any value is made.
        for bytes in [Array("p8 passcode secret=ab".utf8) + [0xFF], Array("p9 passcode secret=a".utf8) + [0, 0x62]] {
            XCTAssertEqual(apart(bytes).1?.error.name, .badSyntax)
            assertAgrees(bytes, "\(bytes)")
        }
    }

    func test_S50_givenAnOverlongSecret_thenItIsHeldWhole_forTheCoreToRefuseByItsBytes() {
        let long = String(repeating: "€", count: 171)  // 513 bytes
        let (request, failure) = apart(Array("s1 set-passcode secret=\(long)".utf8))
        XCTAssertNil(failure)
        XCTAssertEqual(request?.secret("secret")?.count, 513)
        assertAgrees(Array("s1 set-passcode secret=\(long)".utf8))
    }

    func test_S50_givenSeededRandomLinesWithSecrets_thenTheServersFormAgreesWithTheStringForm() {
        var random = SeededGenerator(seed: 0x5EC2_E75)
        let keys = ["secret", "old-secret", "ctx", "uid", "secret", "secrets", "old-secret"]
        let bare: [[UInt8]] = ["a", "Z", "0", "\\", "-", "\u{e9}", "\u{20AC}", "\u{1F600}", "+", "/"].map { Array($0.utf8) }
        let quoted: [[UInt8]] = ["a", " ", "=", "\u{e9}", "\\\\", "\\\"", "\\n", "\\r", "\\t", "\\x", "\"", "\\"].map { Array($0.utf8) }
        var parsed = 0, refused = 0, heldApart = 0
        for _ in 0..<800 {
            var line = Array("t1 \(["passcode", "set-passcode", "right-save", "ping"].randomElement(using: &random)!)".utf8)
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                line += Array(" \(keys.randomElement(using: &random)!)=".utf8)
                if Bool.random(using: &random) {
                    line += (0..<Int.random(in: 0...8, using: &random)).flatMap { _ in bare.randomElement(using: &random)! }
                } else {
                    line += [UInt8(ascii: "\"")]
                    line += (0..<Int.random(in: 0...8, using: &random)).flatMap { _ in quoted.randomElement(using: &random)! }
                    if Int.random(in: 0..<6, using: &random) > 0 { line += [UInt8(ascii: "\"")] }
                }
            }
            assertAgrees(line, String(decoding: line, as: UTF8.self))
            let (request, _) = apart(line)
            if let request {
                parsed += 1
                heldApart += request.secrets.keys.count
            } else {
                refused += 1
            }
        }
        XCTAssertGreaterThan(parsed, 150, "lines that parse")
        XCTAssertGreaterThan(refused, 150, "lines refused")
        XCTAssertGreaterThan(heldApart, 150, "secrets held apart")
    }

    func test_S50_aSecretsDescriptionShowsNothingOfIt() {
        let secret = SecretBytes("Hidden-1234")
        XCTAssertEqual("\(secret)", "SecretBytes(…)")
        let (request, _) = apart(Array("p1 passcode ctx=00 secret=Hidden-1234".utf8))
        XCTAssertFalse(String(describing: request).contains("Hidden"), String(describing: request))
        XCTAssertFalse(String(reflecting: request).contains("Hidden"), String(reflecting: request))
    }

    func test_S50_aSecretsBase64IsWrittenIntoTheLineAsItsStringWouldBe() {
        var random = SeededGenerator(seed: 0xB64)
        for count in 0..<40 {
            let secret = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            var direct = LineWriter(), viaString = LineWriter()
            direct.beginResponse(tag: "t1", status: .ok)
            viaString.beginResponse(tag: "t1", status: .ok)
            direct.append(key: "secret", base64Of: secret)
            viaString.append(key: "secret", value: Base64.encode(secret))
            XCTAssertEqual(direct.bytes, viaString.bytes, "\(count) bytes")
            direct.endLine()
            let parsed = try? Response.parse(Array(direct.bytes.dropLast()))
            XCTAssertEqual(parsed?.arguments.value(for: "secret").map { Base64.decode($0, maximumBytes: 64) }, .success(secret))
        }
    }

    func test_S50_base64DecodesFromBytesAsFromAString() {
        for text in ["", "AAECAw==", "AAEC", "AA==", "AAE=", "AA=A", "A===", "AB==", "AAECA", "####", "AAECAw=="] {
            let fromString = Base64.decode(text, maximumBytes: 8)
            var copy = text
            let fromBytes = copy.withUTF8 { Base64.decode($0, maximumBytes: 8) }
            XCTAssertEqual(fromBytes, fromString, text)
        }
        XCTAssertEqual(Base64.decode("AAECAwQFBgcI", maximumBytes: 8), .failure(.tooLong))
        XCTAssertEqual(Base64.decode("AAECAw==", maximumBytes: 8), .success([0, 1, 2, 3]))
    }
}
