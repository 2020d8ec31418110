// S-10's domain state kept inline (DomainState): the daemon's 32 hex digits
// and anything up to 32 bytes round-trip exactly; longer text is not a
// domain state, and a log or snapshot that holds one is corrupt.

import XCTest

@testable import LocalAuthCore

final class DomainStateTests: XCTestCase {
    func testTextOfUpTo32BytesRoundTripsAndComparesByContent() {
        let hex = "0123456789abcdef0123456789abcdef"
        for text in ["", "a", "aa11", "ds-1000-right-thumb", hex, "é✓ ok", String(repeating: "z", count: 32)] {
            let state = DomainState(text)
            XCTAssertEqual(state?.description, text)
            XCTAssertEqual(state?.isEmpty, text.isEmpty)
            XCTAssertEqual(state?.withUTF8 { Array($0) }, Array(text.utf8))
        }
        XCTAssertEqual(DomainState(hex), DomainState(String(hex)))
        XCTAssertNotEqual(DomainState("ab"), DomainState("abc"))
        XCTAssertNotEqual(DomainState("a\0"), DomainState("a"), "the length is part of the value")
        XCTAssertEqual(Set([DomainState("x"), DomainState("x"), DomainState("y")]).count, 2)
        XCTAssertEqual(DomainState(), "")
    }

    func testMoreThan32BytesIsNotADomainState() {
        XCTAssertNil(DomainState(String(repeating: "a", count: 33)))
        XCTAssertNil(DomainState(String(repeating: "é", count: 17)), "34 UTF-8 bytes")
    }

    func testAnEventOrSnapshotWithALongerTokenIsCorrupt() throws {
        let long = String(repeating: "f", count: 40)
        let event = EventCodec.encode(.enrollmentChanged(uid: 1, templates: ["t"], by: 0, domainState: long))
        XCTAssertThrowsError(try EventCodec.decode(kind: EventKind.enrollmentChanged.rawValue, payload: event))
        let fine = EventCodec.encode(.enrollmentChanged(uid: 1, templates: ["t"], by: 0, domainState: "ok"))
        XCTAssertNoThrow(try EventCodec.decode(kind: EventKind.enrollmentChanged.rawValue, payload: fine))

        var state = AuthState()
        state.users[1, default: UserState()].domainState = "0123456789abcdef0123456789abcdef"
        let snapshot = StateCodec.encode(state)
        XCTAssertEqual(try StateCodec.decode(snapshot), state)
        // The same snapshot with the token's length byte and text grown to 40.
        let token = Array("0123456789abcdef0123456789abcdef".utf8)
        let at = try XCTUnwrap(snapshot.firstRange(of: [UInt8(token.count)] + token)).lowerBound
        let forged = Array(snapshot[..<at]) + [40] + Array(repeating: UInt8(ascii: "f"), count: 40) + Array(snapshot[(at + 33)...])
        XCTAssertThrowsError(try StateCodec.decode(forged))
    }
}
