// CanEvaluateLine, the daemon's one-pass reading of the usual can-evaluate
// line, against the general grammar (`Request.parse`): it takes a line only
// when the parse reads it as the same tag, verb and two arguments, and it
// takes every line of that form (so the fast path is not vacuous). Checked
// on fixed lines, every prefix (bytes arriving one by one), every one-byte
// change, deletion and insertion of usual lines, and seeded random lines.

import XCTest

@testable import LocalAuthProtocol
import LocalAuthTestSupport

final class CanEvaluateLineTests: XCTestCase {
    static let ctx = "0123456789abcdef0123456789ABCDEF"

    func testTheLiteralsAreCheckedAsTheirBytes() {
        func word<T: FixedWidthInteger>(_ text: String, at offset: Int, as: T.Type) -> T {
            Array(text.utf8).withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
        }
        let verb = " can-evaluate ctx="
        XCTAssertEqual(CanEvaluateLine.verbAndCtxKey.0, word(verb, at: 0, as: UInt64.self))
        XCTAssertEqual(CanEvaluateLine.verbAndCtxKey.1, word(verb, at: 8, as: UInt64.self))
        XCTAssertEqual(CanEvaluateLine.verbAndCtxKey.2, word(verb, at: 16, as: UInt16.self))
        XCTAssertEqual(verb.utf8.count, 18)
        XCTAssertEqual(CanEvaluateLine.policyKey, word(" policy=", at: 0, as: UInt64.self))
    }

    func testTheUsualLineGivesItsTagContextAndPolicy() {
        for (line, tag, policy) in [
            ("r0 can-evaluate ctx=\(Self.ctx) policy=biometrics", "r0", "biometrics"),
            ("A.b_c-9 can-evaluate ctx=\(Self.ctx) policy=1", "A.b_c-9", "1"),
            ("\(String(repeating: "t", count: 32)) can-evaluate ctx=\(Self.ctx) policy=deviceOwnerAuthenticationWithBiometricsOrCompanion",
             String(repeating: "t", count: 32), "deviceOwnerAuthenticationWithBiometricsOrCompanion"),
        ] {
            let parts = read(line)
            XCTAssertEqual(parts?.tag, tag, line)
            XCTAssertEqual(parts?.ctx, Self.ctx, line)
            XCTAssertEqual(parts?.policy, policy, line)
            assertAgreesWithTheParser(Array(line.utf8))
        }
        // A policy the scanner takes as it is, even if no policy has that
        // name: the daemon's check answers it. A context id is 32 hex digits.
        XCTAssertEqual(read("t can-evaluate ctx=\(Self.ctx) policy=y")?.policy, "y")
        XCTAssertNil(read("t can-evaluate ctx=x policy=1"))
    }

    func testOtherSpellingsOfTheRequestAreLeftToTheScanner() {
        let ctx = Self.ctx
        for line in [
            "t can-evaluate policy=1 ctx=\(ctx)",  // reordered
            "t can-evaluate ctx=\"\(ctx)\" policy=1",  // quoted
            "t can-evaluate ctx=\(ctx) policy=\"1\"",
            "t can-evaluate ctx=\(ctx) policy=bio\\metrics",  // escape
            "t can-evaluate ctx=\(ctx) policy=1 extra=2",
            "t can-evaluate ctx=\(ctx)",
            "t can-evaluate ctx=\(ctx) policy=1 ",
            "t can-evaluate ctx=\(ctx)  policy=1",
            "t can-evaluate ctx=\(ctx) policy=1\r",
            "t can-evaluate ctx=\(ctx)\tpolicy=1",
            "t can-evaluate ctx=\(ctx) policy=",
            "t can-evaluate ctx= policy=1",
            "t Can-evaluate ctx=\(ctx) policy=1",
            "t can-evaluates ctx=\(ctx) policy=1",
            "t evaluate ctx=\(ctx) policy=1",
            "can-evaluate ctx=\(ctx) policy=1",
            " t can-evaluate ctx=\(ctx) policy=1",
            "\(String(repeating: "t", count: 33)) can-evaluate ctx=\(ctx) policy=1",  // tag too long
            "t can-evaluate ctx=\(ctx) policy=\(String(repeating: "a", count: 65))",  // value too long for the fast path
            "t can-evaluate ctx=\(ctx.dropLast()) policy=1",  // not a context id: 31 digits
            "t can-evaluate ctx=\(ctx)0 policy=1",
            "t can-evaluate ctx=\(ctx.dropLast())g policy=1",
            "t can-evaluate ctx=\(ctx.dropLast())G policy=1",
            "t can-evaluate ctx=\(ctx) policy=bi\u{f6}metrics",
            "t can-evaluate ctx=\(ctx) policy=a=b",
            "",
        ] {
            XCTAssertNil(read(line), line)
            assertAgreesWithTheParser(Array(line.utf8))
        }
    }

    func testEveryPrefixButTheWholeLineIsLeftToTheScanner() {
        let line = Array("tag-1 can-evaluate ctx=\(Self.ctx) policy=owner".utf8)
        for count in 0...line.count {
            let prefix = Array(line[0..<count])
            let taken = prefix.withUnsafeBufferPointer { CanEvaluateLine($0) != nil }
            // The prefixes that end inside the policy are complete lines too.
            let policyStart = line.count - "owner".count
            XCTAssertEqual(taken, count > policyStart, "prefix of \(count) bytes")
            assertAgreesWithTheParser(prefix)
        }
    }

    func testEveryOneByteChangeDeletionAndInsertionAgreesWithTheParser() {
        // Separators, escapes, UTF-8 lead bytes, and both ends of every hex range.
        let interesting: [UInt8] = [0, 0x09, 0x0D, 0x10, 0x19, 0x20, 0x22, 0x2D, 0x2E, 0x2F, 0x30, 0x39, 0x3A, 0x3D, 0x40, 0x41, 0x46, 0x47,
                                    0x5C, 0x5F, 0x60, 0x61, 0x66, 0x67, 0x7A, 0x7F, 0x80, 0xC3, 0xFF]
        for base in ["r15 can-evaluate ctx=\(Self.ctx) policy=biometrics", "x can-evaluate ctx=\(Self.ctx) policy=2"] {
            let line = Array(base.utf8)
            for index in 0..<line.count {
                var deleted = line
                deleted.remove(at: index)
                assertAgreesWithTheParser(deleted)
                for byte in interesting {
                    var changed = line
                    changed[index] = byte
                    assertAgreesWithTheParser(changed)
                    var inserted = line
                    inserted.insert(byte, at: index)
                    assertAgreesWithTheParser(inserted)
                }
            }
        }
    }

    func testSeededRandomLinesAgreeWithTheParser() {
        var random = SeededGenerator(seed: 0xCA_11E7)
        let clean = Array("aZ09._-".utf8), odd = Array("=\" \\\t".utf8) + [0xC3, 0xA9, 0]
        // Mostly clean words of random length; one in four with an odd byte.
        func word(_ limit: Int) -> String {
            var bytes = (0..<Int.random(in: 0...limit, using: &random)).map { _ in clean.randomElement(using: &random)! }
            if Int.random(in: 0..<4, using: &random) == 0 {
                bytes.insert(odd.randomElement(using: &random)!, at: Int.random(in: 0...bytes.count, using: &random))
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        // A context id, one in four with one byte changed to any other.
        let digits = Array("0123456789abcdefABCDEF".utf8)
        func hex32() -> String {
            var bytes = (0..<32).map { _ in digits.randomElement(using: &random)! }
            if Int.random(in: 0..<4, using: &random) == 0 {
                bytes[Int.random(in: 0..<32, using: &random)] = UInt8.random(in: 1...0x7F, using: &random)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        var taken = 0
        for _ in 0..<3000 {
            let verb = Int.random(in: 0..<8, using: &random) == 0 ? "evaluate" : "can-evaluate"
            let ctx = Bool.random(using: &random) ? word(70) : hex32()
            let line = "\(word(34)) \(verb) ctx=\(ctx) policy=\(word(8))"
            if read(line) != nil { taken += 1 }
            assertAgreesWithTheParser(Array(line.utf8))
        }
        XCTAssertGreaterThan(taken, 100, "the generator makes usual lines too")
    }

    // MARK: Helpers

    private func read(_ line: String) -> (tag: String, ctx: String, policy: String)? {
        Array(line.utf8).withUnsafeBufferPointer { buffer in
            CanEvaluateLine(buffer).map { (text($0.tag), text($0.ctx), text($0.policy)) }
        }
    }

    /// Taken exactly when the parse gives `can-evaluate` with ctx (32 hex
    /// digits) then policy (1 to 64 tag characters), written bare and
    /// single-spaced; and then with the same three pieces.
    private func assertAgreesWithTheParser(_ line: [UInt8], file: StaticString = #filePath, line number: UInt = #line) {
        let usual = line.withUnsafeBufferPointer { buffer in
            CanEvaluateLine(buffer).map { (text($0.tag), text($0.ctx), text($0.policy)) }
        }
        let shown = String(decoding: line, as: UTF8.self).debugDescription
        var expected: (String, String, String)?
        if case .request(let request) = Request.parse(line), request.verb == "can-evaluate", request.arguments.count == 2,
           request.arguments[0].key == "ctx", request.arguments[1].key == "policy",
           let ctx = request.arguments.value(for: "ctx"), let policy = request.arguments.value(for: "policy"),
           isContextID(ctx), isWord(policy),
           // Written bare, single-spaced: the line is exactly these pieces.
           line == Array("\(request.tag) can-evaluate ctx=\(ctx) policy=\(policy)".utf8) {
            expected = (request.tag, ctx, policy)
        }
        XCTAssertEqual(usual?.0, expected?.0, shown, file: file, line: number)
        XCTAssertEqual(usual?.1, expected?.1, shown, file: file, line: number)
        XCTAssertEqual(usual?.2, expected?.2, shown, file: file, line: number)
        // The id as parsed while checked: the digits read the plain way.
        let words = line.withUnsafeBufferPointer { buffer in CanEvaluateLine(buffer).map { [$0.ctxHigh, $0.ctxLow] } }
        if let words, let ctx = usual?.1 {
            XCTAssertEqual(words, [UInt64(ctx.prefix(16), radix: 16)!, UInt64(ctx.suffix(16), radix: 16)!], shown, file: file, line: number)
        }
    }

    private func isContextID(_ value: String) -> Bool {
        value.utf8.count == 32 && value.utf8.allSatisfy { b in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(b)
        }
    }

    private func isWord(_ value: String) -> Bool {
        (1...64).contains(value.utf8.count) && value.utf8.allSatisfy { b in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || b == UInt8(ascii: ".") || b == UInt8(ascii: "_")
                || b == UInt8(ascii: "-")
        }
    }
}

private func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}
