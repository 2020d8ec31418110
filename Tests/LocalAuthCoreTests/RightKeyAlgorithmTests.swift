// S-80: the algorithms a right's key offers are Apple's SecKeyAlgorithm raw
// values (Security's SecKeyAdaptors spells each), one operation each, and a
// `right-key-used` record naming anything else, or naming an algorithm
// under another operation, is corrupt.
import LocalAuthCore
import XCTest

final class RightKeyAlgorithmTests: XCTestCase {
    func test_S80_theOfferedAlgorithmsAreApplesECNamesForEachOperation() {
        let names = KeyAlgorithm.all.map(\.name)
        XCTAssertEqual(Set(names).count, names.count, "one entry per name")
        let sign = KeyAlgorithm.all.filter { $0.operation == .sign }.map(\.name)
        XCTAssertEqual(Set(sign), Set(["algid:sign:ECDSA:digest-X962"] + ["SHA1", "SHA224", "SHA256", "SHA384", "SHA512"].flatMap {
            ["algid:sign:ECDSA:digest-X962:\($0)", "algid:sign:ECDSA:message-X962:\($0)"]
        }))
        let decrypt = KeyAlgorithm.all.filter { $0.operation == .decrypt }.map(\.name)
        XCTAssertEqual(decrypt.count, 2 * (5 + 4), "ECDH and ECDHC; five zero-IV hashes, four variable-IV ones")
        XCTAssertTrue(decrypt.contains("algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV"),
                      "eciesEncryptionCofactorVariableIVX963SHA256AESGCM")
        XCTAssertFalse(decrypt.contains("algid:encrypt:ECIES:ECDH:KDFX963:SHA1:AESGCM-KDFIV"), "Apple has none")
        let exchange = KeyAlgorithm.all.filter { $0.operation == .exchange }.map(\.name)
        XCTAssertEqual(exchange.count, 2 * 6)
        XCTAssertTrue(exchange.contains("algid:keyexchange:ECDH"), "ecdhKeyExchangeStandard")
        XCTAssertEqual(KeyAlgorithm.named("algid:keyexchange:ECDHC:KDFX963:SHA384")?.form, .keyExchange(.sha384))
        XCTAssertNil(KeyAlgorithm.named("algid:sign:ECDSA:RFC4754"), "not offered")
        XCTAssertNil(KeyAlgorithm.named("algid:sign:ECDSA:message-X962:SHA256", for: .decrypt))
    }

    func test_S80_aKeyUseRecordNamingAnAlgorithmOfAnotherOperationIsCorrupt() throws {
        let ctx = ContextID(high: 1, low: 2)
        let body = EventBody.rightKeyUsed(uid: 1000, ctx: ctx, identifier: "k",
                                          algorithm: KeyAlgorithm.named("algid:sign:ECDSA:message-X962:SHA256")!)
        var bytes = EventCodec.encode(body)
        XCTAssertEqual(try EventCodec.decode(kind: body.kind.rawValue, payload: bytes), body)
        // The operation string `sign` (after uid, ctx and identifier) becomes `decrypt`'s length-prefixed spelling.
        let sign = Array("\u{4}sign".utf8)
        let at = try XCTUnwrap((0...(bytes.count - sign.count)).first { Array(bytes[$0..<($0 + sign.count)]) == sign })
        bytes.replaceSubrange(at..<(at + sign.count), with: Array("\u{7}decrypt".utf8))
        XCTAssertThrowsError(try EventCodec.decode(kind: body.kind.rawValue, payload: bytes))
    }
}
