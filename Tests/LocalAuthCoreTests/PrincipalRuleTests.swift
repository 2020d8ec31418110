// S-53: whose limits a caller counts against. Given /etc/subuid's ranges
// and what the kernel says of a peer, when its principal is judged, then
// one user with subordinate uids or setuid programs is still one user.

import XCTest
@testable import LocalAuthCore

final class PrincipalRuleTests: XCTestCase {
    let subuid = """
        alice:100000:65536
        1001:165536:65536
        ldapuser:231072:65536
        broken line
        carol:x:5
        """
    var ranges: SubordinateRanges {
        SubordinateRanges(subuid: subuid) { ["alice": 1000, "bob": 1001][$0] }
    }

    func test_S53_givenASubordinateRange_whenOneOfItsUidsConnects_thenItCountsForTheRangesOwner() {
        XCTAssertEqual(Principal.of(peerUID: 100_000, realUID: 100_000, ranges: ranges).uid, 1000)
        XCTAssertEqual(Principal.of(peerUID: 165_535, realUID: 165_535, ranges: ranges).uid, 1000, "the range's last uid")
        XCTAssertEqual(Principal.of(peerUID: 165_536, realUID: 165_536, ranges: ranges).uid, 1001, "an owner written as a uid")
        XCTAssertEqual(Principal.of(peerUID: 231_072 + 7, realUID: nil, ranges: ranges).uid, 231_072,
                       "an owner /etc/passwd does not name keys its range")
        XCTAssertEqual(Principal.of(peerUID: 1002, realUID: 1002, ranges: ranges).uid, 1002, "outside every range")
        XCTAssertEqual(Principal.of(peerUID: 99_999, realUID: 99_999, ranges: ranges).uid, 99_999)
        XCTAssertEqual(Principal.of(peerUID: 296_608, realUID: 296_608, ranges: ranges).uid, 296_608, "past the last range")
    }

    func test_S53_givenASetuidProgram_whenItConnects_thenItCountsForWhoeverRanIt() {
        let sudo = Principal.of(peerUID: 0, realUID: 1000, ranges: ranges)
        XCTAssertEqual(sudo.uid, 1000)
        XCTAssertFalse(sudo.isRootsOwn, "root's privileges, not root's slots")
        XCTAssertEqual(Principal.of(peerUID: 0, realUID: 100_005, ranges: ranges).uid, 1000, "run by a subordinate uid")
        XCTAssertEqual(Principal.of(peerUID: 100_003, realUID: 1000, ranges: ranges).uid, 1000,
                       "a setuid file a subordinate uid owns, run by its owner")
    }

    func test_S53_givenRootsOwnProcess_thenItIsRootsOwn_andAnUnverifiedRootIsNot() {
        XCTAssertEqual(Principal.of(peerUID: 0, realUID: 0, ranges: ranges), Principal(uid: 0, isRootsOwn: true))
        let unverified = Principal.of(peerUID: 0, realUID: nil, ranges: ranges)
        XCTAssertEqual(unverified.uid, 0)
        XCTAssertFalse(unverified.isRootsOwn, "a kernel that cannot say gives no reserved slots")
        XCTAssertTrue(Principal.assumed(for: 0).isRootsOwn)
        XCTAssertFalse(Principal.assumed(for: 1000).isRootsOwn)
    }

    func test_S53_givenNoRanges_thenEveryUidIsItsOwn() {
        let none = SubordinateRanges()
        XCTAssertTrue(none.isEmpty)
        XCTAssertEqual(Principal.of(peerUID: 100_000, realUID: 100_000, ranges: none).uid, 100_000)
        XCTAssertNil(SubordinateRanges(subuid: "", uidOfName: { _ in 1 }).owner(of: 5))
        XCTAssertNil(SubordinateRanges(subuid: "a:4294967295:2\nb:10:0", uidOfName: { _ in 1 }).owner(of: 10),
                     "a range past the uid space or of no uids is skipped")
    }

    func test_S53_givenOverlappingRanges_thenTheOneStartingNearestBelowWins() {
        let overlap = SubordinateRanges(subuid: "10:100:1000\n20:500:10", uidOfName: { _ in nil })
        XCTAssertEqual(overlap.owner(of: 505), 20)
        XCTAssertEqual(overlap.owner(of: 600), 10, "the longer, earlier range still reaches past the short one")
        XCTAssertEqual(overlap.owner(of: 1099), 10)
        XCTAssertNil(overlap.owner(of: 1100))
    }

    func test_S53_givenAFullDaemon_whenOthersConnect_thenTheLastSixteenthIsKeptForRootAndAdministrators() {
        XCTAssertEqual(ConnectionAdmission.reserved(of: 4096), 256)
        XCTAssertEqual(ConnectionAdmission.reserved(of: 8), 0, "too small to keep anything")
        func admits(_ open: Int, mine: Int = 0, reserve: Bool) -> Bool {
            ConnectionAdmission.admits(open: open, openOfPrincipal: mine, maxConnections: 32, maxPerPrincipal: 32,
                                       mayUseReserve: reserve)
        }
        XCTAssertTrue(admits(29, reserve: false))
        XCTAssertFalse(admits(30, reserve: false), "30 of 32: the last 2 are kept")
        XCTAssertTrue(admits(31, reserve: true))
        XCTAssertFalse(admits(32, reserve: true), "full is full")
        XCTAssertFalse(ConnectionAdmission.admits(open: 0, openOfPrincipal: 4, maxConnections: 32, maxPerPrincipal: 4,
                                                  mayUseReserve: true), "the per-principal cap holds for everyone")
    }
}
