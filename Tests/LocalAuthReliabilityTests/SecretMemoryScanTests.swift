// S-50 against the running daemon: secrets sent over its socket leave no copy
// in its memory once they are checked or hashed. F-23's scan (YescryptTests
// searches the test's own memory) turned on the daemon: as root, through
// /proc/PID/mem, every writable mapping (heaps, every thread's arena and
// stack, .data). It found a 20-byte passcode in 8 of 10 runs while the parsed
// request held secrets as Strings (freed, never zeroed); the request now
// holds them as SecretBytes, decoded from the line straight into memory that
// is wiped.
import Foundation
import Glibc
import LocalAuthKeys
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class SecretMemoryScanTests: ReliabilityTestCase {
    func test_S50_givenSecretsSentOverTheSocket_whenTheyAreCheckedAndHashed_thenTheDaemonsMemoryHoldsNoCopy() throws {
        guard getuid() == 0 else { throw XCTSkip("reading another process's memory needs root") }
        let daemon = try startDaemon()
        guard let pid = daemon.pid else { return XCTFail("no pid") }
        let admin = try daemon.connect()
        // Long ones (a String of more than 15 bytes lives on the heap), of
        // lengths no other allocation of a request shares (malloc would soon
        // reuse, and overwrite, a freed buffer of the common sizes and hide
        // a copy), a short one (a small String lives on the stack), one with
        // escapes (decoded apart from the line), a non-ASCII one. Each is its
        // name repeated, so that any 32 bytes of it are its own.
        let first = secret("Scan-First-Passcode", 90)
        let second = secret("Scan-Second-Passcode", 120)
        let wrong = secret("Scan-Wrong-Attempt", 150)
        let escaped = secret(#"Scan "Quoted" Attempt"#, 170)
        let short = Secrets.make("Sc4n-Short")
        let unicode = secret("Scän-Ünïcode-Attempt", 110)
        let right = secret("Scan-Right-Secret", 230)
        XCTAssertOK(try admin.request("s1 set-passcode secret=\(first)"), "hashed: a new passcode")
        let ctx = try newContext(admin)
        try admin.send("ev evaluate ctx=\(ctx) policy=owner reason=scan")
        XCTAssertEqual(try admin.next(tag: "ev")["kind"], "passcode")
        for attempt in [wrong, #"\#(escaped.replacingOccurrences(of: "\"", with: "\\\""))"#, short, unicode] {
            XCTAssertOK(try admin.request("\(tag("p")) passcode ctx=\(ctx) secret=\"\(attempt)\""))
            XCTAssertEqual(try admin.next(tag: "ev")["kind"], "passcode", "checked: a wrong passcode, the prompt again")
        }
        XCTAssertOK(try admin.request("\(tag("p")) passcode ctx=\(ctx) secret=\(first)"))
        XCTAssertEqual(try admin.next(tag: "ev")["method"], "passcode", "checked: the right passcode")
        XCTAssertOK(try admin.request("s2 set-passcode old-secret=\(first) secret=\(second)"), "checked and hashed")
        let encoded = Data(right.utf8).base64EncodedString()
        XCTAssertOK(try admin.request("r1 right-save identifier=scan requirement=default secret=\"\(encoded)\""), "sealed")
        // Lines that carry a secret and are refused: an unknown verb, a key
        // the verb does not take, a line that does not parse.
        let unknown = secret("Scan-Unknown-Verb-Secret", 170)
        let misplaced = secret("Scan-Misplaced-Key-Secret", 190)
        let unparsed = secret("Scan-Unterminated-Secret", 210)
        XCTAssertProtocolError(try admin.request("u3 passcode ctx=\(ctx) secret=\"\(unparsed)"), "bad-syntax")
        XCTAssertProtocolError(try admin.request("u1 frobnicate secret=\(unknown)"), "unknown-verb")
        XCTAssertProtocolError(try admin.request("u2 ping old-secret=\(misplaced)"), "bad-argument")
        XCTAssertOK(try admin.request("z ping"), "every line before it is handled")

        let found = try copies(of: ["first": first, "second": second, "wrong": wrong, "escaped": escaped, "short": short,
                                    "unicode": unicode, "right": right, "right's base64": encoded,
                                    "unknown verb's": unknown, "misplaced key's": misplaced, "unparsed line's": unparsed], inMemoryOf: pid)
        XCTAssertEqual(found, [:], "copies of secrets in the daemon's memory after use (S-50)")
    }

    /// F-25: a `secret=` whose line comes in two reads. The first read's
    /// bytes stayed in the shell's read buffer (only a handled secret line
    /// wiped it), its partial line in the splitter's storage when that grew
    /// (the array's old storage freed as it was) or moved it to the front
    /// (its old place past the new end, out of every wipe's reach).
    func test_S50_F25_givenASecretLineSplitOverTwoReads_whenItIsChecked_thenTheDaemonsMemoryHoldsNoCopy() throws {
        guard getuid() == 0 else { throw XCTSkip("reading another process's memory needs root") }
        let daemon = try startDaemon()
        guard let pid = daemon.pid else { return XCTFail("no pid") }
        let client = try daemon.connect()
        XCTAssertOK(try client.request("s1 set-passcode secret=\(secret("Split-Right-Passcode", 60))"))
        let ctx = try newContext(client)
        try client.send("ev evaluate ctx=\(ctx) policy=owner reason=split")
        XCTAssertEqual(try client.next(tag: "ev")["kind"], "passcode")
        // The first part after a long batch (the partial line is moved to
        // the front), then after a short line (the splitter grows for the
        // second); in that order a later read does not overwrite either.
        let afterShort = secret("Split-After-Short-Line", 130)
        let afterBatch = secret("Split-After-Long-Batch", 150)
        var sentBefore: [String: String] = [:]
        for (name, attempt, before) in [("after a batch", afterBatch, 60), ("after a short line", afterShort, 1)] {
            let line = Array("p\(before) passcode ctx=\(ctx) secret=\(attempt)\n".utf8)
            let cut = line.count - 10
            try client.sendRaw(Array(String(repeating: "a ping\n", count: before).utf8) + Array(line[..<cut]))
            for _ in 0..<before { XCTAssertOK(try client.next(tag: "a"), "the first read is in") }
            try client.sendRaw(Array(line[cut...]))
            XCTAssertOK(try client.next(tag: "p\(before)"))
            XCTAssertEqual(try client.next(tag: "ev")["kind"], "passcode", "checked: a wrong passcode, the prompt again")
            sentBefore[name] = String(decoding: Array(attempt.utf8).dropLast(9), as: UTF8.self)
        }
        XCTAssertOK(try client.request("z ping"), "every line before it is handled")
        let found = try copies(of: sentBefore, inMemoryOf: pid)
        XCTAssertEqual(found, [:], "copies of a split secret's first part in the daemon's memory after its check (S-50)")
    }

    /// A connection that sends the start of a secret line and goes away: the
    /// partial line in its splitter is wiped with the connection, not only
    /// freed (S-50; the red team's observation after F-25).
    func test_S50_givenAnUnfinishedSecretLine_whenItsConnectionCloses_thenTheDaemonsMemoryHoldsNoCopy() throws {
        guard getuid() == 0 else { throw XCTSkip("reading another process's memory needs root") }
        let daemon = try startDaemon()
        guard let pid = daemon.pid else { return XCTFail("no pid") }
        var unfinished: [String: String] = [:]
        for (name, before) in [("alone", 0), ("after a batch", 60)] {
            let client = try daemon.connect()
            let ctx = try newContext(client)
            let attempt = secret("Unfinished-\(before)-Secret-Line", 140 + before)
            try client.sendRaw(Array(String(repeating: "a ping\n", count: before).utf8)
                               + Array("p passcode ctx=\(ctx) secret=\(attempt)".utf8))
            for _ in 0..<before { XCTAssertOK(try client.next(tag: "a"), "the read is in") }
            unfinished[name] = attempt
            client.shutDown()
        }
        let admin = try daemon.connect()
        // Observable: the daemon has forgotten both connections.
        _ = try waitUntil { try admin.request("s stats")["connections"] == "1" }
        XCTAssertEqual(try admin.request("s stats")["connections"], "1", "the two connections are gone")
        let found = try copies(of: unfinished, inMemoryOf: pid)
        XCTAssertEqual(found, [:], "copies of an unfinished secret line in the daemon's memory after its connection closed (S-50)")
    }

    /// S-50, S-78: a right's private key is in the clear only while it is
    /// made and while one operation runs. After a save and every kind of
    /// operation, the scalar (opened here from the store with the daemon's
    /// key, as the daemon opens it) is nowhere in the daemon's memory, in
    /// either byte order (a BIGNUM holds it little-endian), while the scan
    /// does find the sealed box the daemon keeps.
    func test_S50_S78_givenARightsKeyMadeAndUsed_thenTheDaemonsMemoryHoldsNoPrivateKeyBytes() throws {
        guard getuid() == 0 else { throw XCTSkip("reading another process's memory needs root") }
        let daemon = try startDaemon()
        guard let pid = daemon.pid else { return XCTFail("no pid") }
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("s1 set-passcode secret=\(Secrets.make("Scan-Key-Owner"))"))
        XCTAssertOK(try admin.request("e1 enroll uid=0"))
        XCTAssertOK(try admin.request("r1 right-save identifier=scan-key requirement=biometry"))
        let ctx = try newContext(admin)
        try admin.send("a right-authorize ctx=\(ctx) identifier=scan-key reason=scan")
        XCTAssertEqual(try admin.next(tag: "a").status, .prompt)
        XCTAssertOK(try admin.request("m sensor uid=0 result=match"))
        XCTAssertOK(try admin.next(tag: "a"))
        let publicBytes = Array(Data(base64Encoded: try XCTUnwrap(try admin.request("p right-public-key identifier=scan-key")["public-key"]))!)
        let publicKey = try XCTUnwrap(P256PublicKey(x963: publicBytes))
        let other = P256PrivateKey.generate()
        let base64 = { (bytes: [UInt8]) in "\"\(Data(bytes).base64EncodedString())\"" }
        for round in 0..<8 {
            XCTAssertOK(try admin.request("g\(round) right-sign ctx=\(ctx) identifier=scan-key algorithm=algid:sign:ECDSA:message-X962:SHA256 data=AAAA"))
            let ciphertext = ECIES.encrypt(Array("round \(round)".utf8), to: publicKey, ECIES.Variant(digest: .sha256, variableIV: true))
            XCTAssertOK(try admin.request("d\(round) right-decrypt ctx=\(ctx) identifier=scan-key "
                + "algorithm=algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV data=\(base64(ciphertext))"))
            XCTAssertOK(try admin.request("x\(round) right-exchange ctx=\(ctx) identifier=scan-key algorithm=algid:keyexchange:ECDH "
                + "public-key=\(base64(other.publicKey))"))
        }
        XCTAssertOK(try admin.request("z ping"), "every operation before it is answered")

        // The scalar as the daemon opens it: the store's box, the daemon's key file.
        let stored = try XCTUnwrap(SealedRightKey(stateDirectory: daemon.stateDirectory, uid: 0, identifier: "scan-key"))
        XCTAssertEqual(stored.publicKey, publicBytes)
        let sealed = stored.sealedScalar
        let daemonKey = readBytes(daemon.stateDirectory + "/secrets.key")
        XCTAssertEqual(daemonKey.count, 32)
        var scalar = try XCTUnwrap(stored.open(with: daemonKey), "the box opens as the daemon opens it")
        defer { SecretMemory.wipe(&scalar) }
        XCTAssertEqual(try XCTUnwrap(P256PrivateKey(scalar: scalar, publicKey: publicBytes)).publicKey, publicBytes)

        var found: [String: Int] = [:]
        try ProcessMemory.forEachWritableMapping(of: String(pid)) { mapping in
            for (name, needle) in [("scalar", scalar), ("scalar, little-endian", Array(scalar.reversed())),
                                   ("sealed box", Array(sealed.suffix(32)))] {
                let occurrences = Secrets.occurrences(of: needle, in: mapping)
                if occurrences > 0 { found[name, default: 0] += occurrences }
            }
        }
        XCTAssertNotNil(found.removeValue(forKey: "sealed box"), "the scan sees the daemon's right store (it would see a scalar)")
        XCTAssertEqual(found, [:], "private key bytes in the daemon's memory outside the sealed form (S-50, S-78)")
    }

    /// `name` repeated to `length` bytes and the length (any 32 bytes of it are its own).
    private func secret(_ name: String, _ length: Int) -> String {
        var text = name
        while text.utf8.count < length { text += "." + name }
        return Secrets.make(text + String(length))
    }

    /// How often each named needle (a long one's bytes after its first 16)
    /// occurs in the writable mappings of `pid`.
    private func copies(of needles: [String: String], inMemoryOf pid: pid_t) throws -> [String: Int] {
        var found: [String: Int] = [:]
        try ProcessMemory.forEachWritableMapping(of: String(pid)) { mapping in
            for (name, needle) in needles {
                // Without its first 16 bytes when it is long: free() writes
                // its list pointers there, over a buffer that held only the
                // secret (a SecretBytes left unwiped would be missed).
                let bytes = Array(needle.utf8)
                let tail = bytes.count >= 48 ? Array(bytes.dropFirst(16)) : bytes
                let occurrences = Secrets.occurrences(of: tail, in: mapping)
                if occurrences > 0 { found[name, default: 0] += occurrences }
            }
        }
        return found
    }
}

extension Secrets {
    /// Non-overlapping occurrences of `needle` in `haystack` (memchr for the
    /// first byte, then memcmp: the daemon's mappings are tens of megabytes).
    static func occurrences(of needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int {
        guard let first = needle.first, let base = haystack.baseAddress else { return 0 }
        var total = 0
        var offset = 0
        while offset + needle.count <= haystack.count,
              let hit = memchr(base + offset, Int32(first), haystack.count - needle.count + 1 - offset) {
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(hit, needle, needle.count) == 0 {
                total += 1
                offset = at + needle.count
            } else {
                offset = at + 1
            }
        }
        return total
    }
}
