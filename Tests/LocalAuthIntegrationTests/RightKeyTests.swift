// The rights' keys on the wire (PROTOCOL.md v1.4, S-78..S-80): a save makes
// a key whose public half its owner may always read; the private half works
// only on a context where the right is authorized, stops for ever for a
// biometry-current-set right once the enrolled set changes, and is nobody
// else's; the bytes are Apple's (checked with LocalAuthKeys, itself checked
// against outside answers) and so are the refusals (domain=sec, -50).
import Foundation
import LocalAuthKeys
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class RightKeyTests: IntegrationTestCase {
    static let signMessage = "algid:sign:ECDSA:message-X962:SHA256"
    static let signDigest = "algid:sign:ECDSA:digest-X962:SHA256"
    static let ecies = "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV"

    private func b64(_ bytes: [UInt8]) -> String { "\"\(Data(bytes).base64EncodedString())\"" }
    private func bytes(_ reply: Response, _ key: String) -> [UInt8] { reply[key].flatMap { Data(base64Encoded: $0) }.map(Array.init) ?? [] }

    private func publicKey(_ client: Client, _ identifier: String) throws -> [UInt8] {
        let reply = try client.request("\(tag("pk")) right-public-key identifier=\(identifier)")
        XCTAssertOK(reply)
        return bytes(reply, "public-key")
    }

    /// Authorizes `identifier` on `ctx` with a matching finger (or the
    /// context's earlier success, `method=cached`).
    private func authorize(_ client: Client, _ ctx: String, _ identifier: String) throws {
        let tag = tag("a")
        try client.send("\(tag) right-authorize ctx=\(ctx) identifier=\(identifier) reason=\"use the key\"")
        let first = try client.next(tag: tag)
        if first.status == .ok { return XCTAssertEqual(first["method"], "cached") }
        XCTAssertEqual(first.status, .prompt)
        try sensor(client, "match")
        XCTAssertOK(try client.next(tag: tag))
    }

    func test_S78_aSaveMakesAKeyWhosePublicHalfItsOwnerMayAlwaysRead() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        XCTAssertOK(try client.request("s1 right-save identifier=com.example.key requirement=biometry"))
        XCTAssertEqual(try client.request("st right-state identifier=com.example.key")["has-key"], "true")
        let first = try publicKey(client, "com.example.key")
        XCTAssertEqual(first.count, 65, "ANSI X9.63 uncompressed")
        XCTAssertEqual(first.first, 4)
        XCTAssertNotNil(P256PublicKey(x963: first), "a point of P-256")
        XCTAssertOK(try client.request("s2 right-save identifier=com.example.key requirement=biometry secret=AAAA"))
        XCTAssertNotEqual(try publicKey(client, "com.example.key"), first, "a save makes a new key")
        XCTAssertOK(try client.request("s3 right-save identifier=a.first requirement=default"))

        try client.send("l right-list")
        var listed: [Response] = []
        while true {
            let line = try client.next(tag: "l")
            if line.status != .right { XCTAssertOK(line); XCTAssertEqual(line["count"], "2"); break }
            listed.append(line)
        }
        XCTAssertEqual(listed.map { $0["identifier"] }, ["a.first", "com.example.key"], "in identifier order")
        XCTAssertEqual(listed.map { $0["has-secret"] }, ["false", "true"])
        XCTAssertEqual(listed.map { $0["requirement"] }, ["default", "biometry"])
        XCTAssertEqual(listed.map { $0["has-key"] }, ["true", "true"])
        XCTAssertProtocolError(try client.request("u right-public-key identifier=none"), "unknown-right")
        XCTAssertOK(try client.request("r right-remove identifier=com.example.key"))
        XCTAssertProtocolError(try client.request("u2 right-public-key identifier=com.example.key"), "unknown-right",
                               "the key goes with the right")
    }

    func test_S78_theKeySurvivesARestartAndARightSavedBeforeKeysHasNone() throws {
        let daemon = try startDaemon()
        var client = try daemon.connect()
        try prepareOwner(client)
        XCTAssertOK(try client.request("s right-save identifier=kept requirement=biometry"))
        let before = try publicKey(client, "kept")
        daemon.stop()
        // A right as a daemon before S-78 wrote it (version 1: five fields, no key), beside the kept one.
        let path = daemon.stateDirectory + "/rights"
        let kept = try XCTUnwrap(readText(path).split(separator: "\n").first { $0.hasPrefix("0 kept ") })
        XCTAssertEqual(kept.split(separator: " ").count, 7, "version 3: the key is the sixth field, the account (S-59) the seventh")
        try "localauthd-rights 1\n0 old default - -\n".write(toFile: path, atomically: true, encoding: .utf8)
        try daemon.start()
        client = try daemon.connect()
        XCTAssertEqual(try client.request("st right-state identifier=old")["has-key"], "false")
        XCTAssertProtocolError(try client.request("p right-public-key identifier=old"), "bad-state")
        let ctx = try newContext(client)
        try authorize(client, ctx, "old")
        let refused = try client.request("g right-sign ctx=\(ctx) identifier=old algorithm=\(Self.signMessage) data=AAAA")
        XCTAssertProtocolError(refused, "bad-state")
        XCTAssertTrue(refused["message"]?.contains("save it again") == true, "\(refused)")
        XCTAssertOK(try client.request("s2 right-save identifier=old requirement=default"))
        XCTAssertEqual(try publicKey(client, "old").count, 65)

        // The kept right's key, saved under version 3, comes back unchanged after a restart.
        let v3 = readText(path)
        XCTAssertTrue(v3.hasPrefix("localauthd-rights 3\n"))
        try (v3 + kept + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try daemon.restart()
        client = try daemon.connect()
        XCTAssertEqual(try publicKey(client, "kept"), before)
        let again = try newContext(client)
        try authorize(client, again, "kept")
        let signed = try client.request("g2 right-sign ctx=\(again) identifier=kept algorithm=\(Self.signMessage) data=\(b64([7]))")
        XCTAssertTrue(try XCTUnwrap(P256PublicKey(x963: before)).verify(signature: bytes(signed, "signature"), digest: Digest.sha256.hash([7])))
    }

    func test_S79_S80_privateKeyOperationsWorkOnlyWhereTheRightIsAuthorizedAndGiveApplesBytes() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        XCTAssertOK(try client.request("s right-save identifier=k requirement=biometry"))
        let publicBytes = try publicKey(client, "k")
        let publicKey = try XCTUnwrap(P256PublicKey(x963: publicBytes))
        let message = Array("a server's challenge".utf8)
        let ctx = try newContext(client)
        XCTAssertProtocolError(try client.request("n1 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.signMessage) data=\(b64(message))"),
                               "not-authorized", "S-79: not before an authorization")
        try authorize(client, ctx, "k")

        let signed = try client.request("g1 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.signMessage) data=\(b64(message))")
        XCTAssertOK(signed)
        XCTAssertTrue(publicKey.verify(signature: bytes(signed, "signature"), digest: Digest.sha256.hash(message)), "X9.62 DER over SHA-256")
        let digest = Digest.sha256.hash(Array("digest me".utf8))
        let digestSigned = try client.request("g2 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.signDigest) data=\(b64(digest))")
        XCTAssertTrue(publicKey.verify(signature: bytes(digestSigned, "signature"), digest: digest))

        let plaintext = Array("for the right's eyes only".utf8)
        let ciphertext = ECIES.encrypt(plaintext, to: publicKey, ECIES.Variant(digest: .sha256, variableIV: true))
        let opened = try client.request("d1 right-decrypt ctx=\(ctx) identifier=k algorithm=\(Self.ecies) data=\(b64(ciphertext))")
        XCTAssertOK(opened)
        XCTAssertEqual(bytes(opened, "data"), plaintext, "Apple's ECIES, E || C || T")

        let other = P256PrivateKey.generate()
        let z = try client.request("x1 right-exchange ctx=\(ctx) identifier=k algorithm=algid:keyexchange:ECDH public-key=\(b64(other.publicKey))")
        XCTAssertEqual(bytes(z, "data"), other.sharedSecret(with: publicKey), "Z, the X coordinate")
        let derived = try client.request("x2 right-exchange ctx=\(ctx) identifier=k algorithm=algid:keyexchange:ECDHC:KDFX963:SHA256 "
            + "public-key=\(b64(other.publicKey)) requested-size=48 shared-info=\(b64([1, 2, 3]))")
        XCTAssertEqual(bytes(derived, "data"), X963KDF.derive(.sha256, secret: other.sharedSecret(with: publicKey), sharedInfo: [1, 2, 3], size: 48))

        // Apple's refusals: errSecParam, in domain=sec.
        func assertSecParam(_ reply: Response, _ text: String, _ note: String, line: UInt = #line) {
            XCTAssertEqual(reply.status, .err, note, line: line)
            XCTAssertEqual(reply["domain"], "sec", note, line: line)
            XCTAssertEqual(reply["code"], "-50", note, line: line)
            XCTAssertEqual(reply["name"], "errSecParam", note, line: line)
            XCTAssertTrue(reply["message"]?.contains(text) == true, "\(note): \(reply)", line: line)
        }
        assertSecParam(try client.request("e1 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.ecies) data=\(b64(message))"),
                       "\(Self.ecies): algorithm not supported by the key", "a decryption algorithm to sign")
        assertSecParam(try client.request("e2 right-sign ctx=\(ctx) identifier=k algorithm=algid:sign:RSA:raw data=\(b64(message))"),
                       "algorithm not supported by the key", "RSA")
        assertSecParam(try client.request("e3 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.signDigest) data=\(b64(Array(digest.dropLast())))"),
                       "bad digest size", "31 bytes for SHA-256")
        var tampered = ciphertext
        tampered[70] ^= 1
        assertSecParam(try client.request("e4 right-decrypt ctx=\(ctx) identifier=k algorithm=\(Self.ecies) data=\(b64(tampered))"),
                       "Failed to aes-gcm decrypt", "a changed byte")
        assertSecParam(try client.request("e5 right-decrypt ctx=\(ctx) identifier=k algorithm=\(Self.ecies) data=\(b64(Array(ciphertext.prefix(80))))"),
                       "too short", "shorter than E and T")
        assertSecParam(try client.request("e6 right-exchange ctx=\(ctx) identifier=k algorithm=algid:keyexchange:ECDH public-key=\(b64(Array(repeating: 4, count: 65)))"),
                       "not a point", "off the curve")
        assertSecParam(try client.request("e7 right-exchange ctx=\(ctx) identifier=k algorithm=algid:keyexchange:ECDH:KDFX963:SHA256 public-key=\(b64(other.publicKey))"),
                       "requested-size", "a KDF without its size")
        XCTAssertProtocolError(try client.request("e8 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.signMessage) data=\(b64(Array(repeating: 1, count: 4097)))"),
                               "limit-exceeded")
        XCTAssertProtocolError(try client.request("e9 right-sign ctx=\(ctx) identifier=k data=\(b64(message))"), "missing-argument")
        XCTAssertProtocolError(try client.request("e10 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.signMessage) data=AAA"), "bad-argument")
        XCTAssertProtocolError(try client.request("e11 right-sign ctx=\(ctx) identifier=k algorithm=\(Self.signMessage) data=AAAA secret=AAAA"),
                               "bad-argument", "a key the verb does not take")

        // Another context of the same connection has no grant; deauthorizing ends it.
        let second = try newContext(client)
        XCTAssertProtocolError(try client.request("o1 right-sign ctx=\(second) identifier=k algorithm=\(Self.signMessage) data=\(b64(message))"),
                               "not-authorized")
        XCTAssertOK(try client.request("da right-deauthorize ctx=\(ctx) identifier=k"))
        XCTAssertProtocolError(try client.request("o2 right-decrypt ctx=\(ctx) identifier=k algorithm=\(Self.ecies) data=\(b64(ciphertext))"),
                               "not-authorized")
    }

    func test_S79_aBiometryCurrentSetRightsKeyIsUnusableAfterAnEnrollmentChange() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        XCTAssertOK(try client.request("s right-save identifier=bound requirement=biometry-current-set"))
        let ctx = try newContext(client)
        try authorize(client, ctx, "bound")
        let sign = "right-sign ctx=\(ctx) identifier=bound algorithm=\(Self.signMessage) data=AAAA"
        XCTAssertOK(try client.request("g1 \(sign)"), "usable while the enrolled set is the save's")
        XCTAssertOK(try client.request("e enroll uid=0 template=another-finger"))
        let refused = try client.request("g2 \(sign)")
        XCTAssertProtocolError(refused, "not-authorized")
        XCTAssertTrue(refused["message"]?.contains("enrolled biometry changed") == true, "\(refused)")
        try authorize(client, ctx, "bound")
        XCTAssertProtocolError(try client.request("g3 \(sign)"), "not-authorized", "a new authorization does not bring the key back")
        XCTAssertOK(try client.request("u unenroll uid=0 template=another-finger"))
        XCTAssertProtocolError(try client.request("g4 \(sign)"), "not-authorized", "nor does undoing the change: the token is new")
        XCTAssertEqual(try publicKey(client, "bound").count, 65, "the public half stays readable")
        // Saving again makes a new key, bound to the set of that save.
        XCTAssertOK(try client.request("s2 right-save identifier=bound requirement=biometry-current-set"))
        try authorize(client, ctx, "bound")
        XCTAssertOK(try client.request("g5 \(sign)"))
    }

    func test_S79_anotherUidCannotUseTheKey() throws {
        let daemon = try startDaemon()
        let owner = try daemon.connect()
        try prepareOwner(owner)
        XCTAssertOK(try owner.request("s right-save identifier=mine requirement=default"))
        let ctx = try newContext(owner)
        try authorize(owner, ctx, "mine")
        let sign = "identifier=mine algorithm=\(Self.signMessage) data=AAAA"
        XCTAssertOK(try owner.request("g right-sign ctx=\(ctx) \(sign)"))

        let stranger = try daemon.connect(asUID: 65534)
        XCTAssertProtocolError(try stranger.request("p right-public-key identifier=mine"), "unknown-right")
        XCTAssertProtocolError(try stranger.request("g1 right-sign ctx=\(ctx) \(sign)"), "unknown-context",
                               "the owner's authorized context is not the stranger's")
        let theirs = try newContext(stranger)
        XCTAssertProtocolError(try stranger.request("g2 right-sign ctx=\(theirs) \(sign)"), "unknown-right")
        XCTAssertProtocolError(try stranger.request("x right-exchange ctx=\(theirs) identifier=mine algorithm=algid:keyexchange:ECDH "
            + "public-key=\(b64(P256PrivateKey.generate().publicKey))"), "unknown-right")
        let list = try stranger.request("l right-list")
        XCTAssertOK(list)
        XCTAssertEqual(list["count"], "0", "no RIGHT line precedes the OK")
    }
}
