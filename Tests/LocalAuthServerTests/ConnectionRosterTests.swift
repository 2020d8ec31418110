// ConnectionRoster, who is connected as a value: given connections opened
// and closed, the admissions MaxConnections and MaxConnectionsPerUser allow,
// the contexts' owners, and the epoll interest it asks for.
import LocalAuthCore
import XCTest
@testable import LocalAuthServer

final class ConnectionRosterTests: XCTestCase {
    private let alice: UserID = 1000, bob: UserID = 1001

    func test_givenAUserAtMaxConnectionsPerUser_thenOnlyOthersAreLetIn_andAClosedOneFreesItsPlace() throws {
        var roster = ConnectionRoster()
        let first = try XCTUnwrap(roster.admit(alice, bus: nil, open: 0, maxConnections: 10, maxPerUser: 2, mayUseReserve: false))
        XCTAssertEqual(first, 64, "ids start above the shell's own tokens")
        // The 16th token (the keyring's) once was the first connection's id, which then went unanswered.
        XCTAssertTrue(EventLoop.Token.allCases.allSatisfy { $0.rawValue < first }, "every epoll token is below the first id")
        XCTAssertNotNil(roster.admit(alice, bus: nil, open: 1, maxConnections: 10, maxPerUser: 2, mayUseReserve: false))
        XCTAssertNil(roster.admit(alice, bus: nil, open: 2, maxConnections: 10, maxPerUser: 2, mayUseReserve: false))
        XCTAssertNotNil(roster.admit(bob, bus: nil, open: 2, maxConnections: 10, maxPerUser: 2, mayUseReserve: false))
        XCTAssertNil(roster.admit(bob, bus: nil, open: 10, maxConnections: 10, maxPerUser: 2, mayUseReserve: false), "MaxConnections")
        roster.closed(first, uid: alice)
        XCTAssertEqual(roster.perUser[alice], 1)
        XCTAssertNotNil(roster.admit(alice, bus: nil, open: 2, maxConnections: 10, maxPerUser: 2, mayUseReserve: false))
    }

    func test_S53_givenTheLastSixteenthOfMaxConnections_thenOnlyThoseWhoMayUseTheReserveAreLetIn() throws {
        var roster = ConnectionRoster()
        XCTAssertNil(roster.admit(alice, bus: nil, open: 15, maxConnections: 16, maxPerUser: 16, mayUseReserve: false))
        XCTAssertNotNil(roster.admit(bob, bus: nil, open: 15, maxConnections: 16, maxPerUser: 16, mayUseReserve: true))
        XCTAssertNil(roster.perUser[alice], "a refusal counts nothing")
    }

    func test_givenABusCaller_thenItsPeerIsKnownUntilItCloses() throws {
        var roster = ConnectionRoster()
        let bus = BusPeer(name: ":1.42", app: "app")
        let id = try XCTUnwrap(roster.admit(alice, bus: bus, open: 0, maxConnections: 10, maxPerUser: 10, mayUseReserve: false))
        let socket = try XCTUnwrap(roster.admit(alice, bus: nil, open: 1, maxConnections: 10, maxPerUser: 10, mayUseReserve: false))
        XCTAssertEqual(roster.busPeer(of: id), bus)
        XCTAssertNil(roster.busPeer(of: socket))
        roster.closed(id, uid: alice)
        XCTAssertNil(roster.busPeer(of: id))
        XCTAssertNil(roster.perUser[bob])
    }

    func test_givenOutputLeftUnsent_thenWritabilityIsWatchedOnceUntilItDrains() {
        var roster = ConnectionRoster()
        guard case .watch(16, reading: true, writing: true)? = roster.writability(16, unsent: true, reading: true) else {
            return XCTFail("unsent output: watch writability")
        }
        XCTAssertNil(roster.writability(16, unsent: true, reading: true), "already watched")
        guard case .watch(16, reading: false, writing: true) = roster.watch(16, reading: false) else {
            return XCTFail("pausing keeps the writability interest")
        }
        guard case .watch(16, reading: true, writing: false)? = roster.writability(16, unsent: false, reading: true) else {
            return XCTFail("drained: writability no longer watched")
        }
        XCTAssertNil(roster.writability(16, unsent: false, reading: true))
    }

    func test_givenAContextsOwner_thenDisowningForgetsIt() {
        var roster = ConnectionRoster()
        let ctx = ContextID(high: 1, low: 2)
        roster.own(ctx, by: 16)
        XCTAssertEqual(roster.owner(of: ctx), 16)
        roster.disown(ctx)
        XCTAssertNil(roster.owner(of: ctx))
        roster.own(ctx, by: 17)
        roster.disownAll()
        XCTAssertNil(roster.owner(of: ctx))
    }
}
