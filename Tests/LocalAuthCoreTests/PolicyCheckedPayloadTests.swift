// PolicyCheckedPayload: the policy-checked payload the daemon writes from a
// check's fields (S-19: every can-evaluate is recorded). It must be the
// on-disk layout of format 1 events, byte for byte (golden bytes below,
// written out by hand from the layout ByteWriter used), decode to the same
// event, and be exactly `size` bytes, for every field combination.

import XCTest

@testable import LocalAuthCore

final class PolicyCheckedPayloadTests: XCTestCase {
    private func payload(_ check: PolicyCheck) -> [UInt8] {
        let size = PolicyCheckedPayload.size(check)
        // Room to spare, filled with a marker: the writer must stop at `size`.
        var bytes = [UInt8](repeating: 0xEE, count: size + 8)
        bytes.withUnsafeMutableBytes { PolicyCheckedPayload.write(check, into: $0) }
        XCTAssertEqual(Array(bytes[size...]), [UInt8](repeating: 0xEE, count: 8), "wrote past size for \(check)")
        return Array(bytes[..<size])
    }

    private let ctx = ContextID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
    private let ctxBytes: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10]

    func testGoldenBytesOfTheRecordedLayout() {
        // version 1, uid varint, ctx big-endian, policy and biometry ZigZag
        // varints, then absent result and reason.
        let ok = PolicyCheck(uid: 1000, ctx: ctx, policy: .biometrics, biometry: .touchID, result: nil, reason: nil,
                             domainState: "not part of the event")
        XCTAssertEqual(payload(ok), [0x01, 0xE8, 0x07] + ctxBytes + [0x02, 0x02, 0x00, 0x00])
        // result -8 (biometryLockout) ZigZags to 15; the reason is a varint length and UTF-8.
        let locked = PolicyCheck(uid: 0, ctx: ctx, policy: .owner, biometry: .faceID, result: .biometryLockout,
                                 reason: "passcode-required", domainState: "")
        XCTAssertEqual(payload(locked), [0x01, 0x00] + ctxBytes + [0x04, 0x04, 0x01, 0x0F, 0x01, 17] + Array("passcode-required".utf8))
        // EventCodec writes the kind through the same layout.
        XCTAssertEqual(EventCodec.encode(ok.event), payload(ok))
        XCTAssertEqual(EventCodec.encode(locked.event), payload(locked))
    }

    func testEveryCombinationDecodesToItsEventAndIsExactlySizeBytes() throws {
        let reasons: [String?] = [nil, "", "passcode-required", "é✓", String(repeating: "r", count: 300)]
        var results: [LAErrorCode?] = [nil]
        results.append(contentsOf: LAErrorCode.allCases.map(Optional.some))
        var checked = 0
        for uid: UserID in [0, 1, 127, 128, 65534, .max] {
            for policy in Policy.allCases {
                for biometry in BiometryType.allCases {
                    for result in results {
                        for reason in reasons {
                            let check = PolicyCheck(uid: uid, ctx: ctx, policy: policy, biometry: biometry, result: result,
                                                    reason: reason, domainState: "")
                            let bytes = payload(check)
                            let decoded = try EventCodec.decode(kind: EventKind.policyChecked.rawValue, payload: bytes)
                            XCTAssertEqual(decoded, check.event)
                            checked += 1
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 1000)
    }
}
