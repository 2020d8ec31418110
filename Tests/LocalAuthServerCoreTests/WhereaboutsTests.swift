// Whereabouts (S-61..S-63) as a value: which question a check waits for,
// what blocks biometry, how logind's answers and failures are taken.
import LocalAuthCore
import LocalAuthSystem
import XCTest
@testable import LocalAuthServer

final class WhereaboutsValueTests: XCTestCase {
    let second: UInt64 = 1_000_000_000

    func present() -> Whereabouts {
        var places = Whereabouts()
        places.logindPresent = true
        places.hostName = "workstation"
        return places
    }

    func test_S61_anRhostThatNamesThisMachineIsLocal_anyOtherIsRemote() {
        let places = present()
        for local in [nil, "", "localhost", "127.0.0.1", "::1", "workstation"] { XCTAssertNil(places.remoteHost(local), "\(local ?? "nil")") }
        XCTAssertEqual(places.remoteHost("laptop.example.org"), "laptop.example.org")
        XCTAssertEqual(places.block(for: 16, rhost: "laptop.example.org", reader: nil), BiometryBlock(.remote, detail: "laptop.example.org"))
    }

    func test_S61_theSessionIsAskedOncePerConnection_thenTheLidEverySecond() {
        var places = present()
        XCTAssertEqual(places.wait(for: 16, rhost: nil, now: 0), .init(question: .session, ask: true))
        XCTAssertEqual(places.wait(for: 16, rhost: nil, now: 0), .init(question: .session, ask: false), "asked already")
        places.sessionAnswered(16, .noSession, now: 0)
        XCTAssertEqual(places.wait(for: 16, rhost: nil, now: 0), .init(question: .lid, ask: true))
        XCTAssertEqual(places.wait(for: 16, rhost: nil, now: 0), .init(question: .lid, ask: false))
        XCTAssertFalse(places.lidAnswered(.success(LidState(closed: false, docked: false)), reader: nil, now: 0))
        XCTAssertNil(places.wait(for: 16, rhost: nil, now: second - 1), "a fresh reading")
        XCTAssertEqual(places.wait(for: 16, rhost: nil, now: second), .init(question: .lid, ask: true))
        // An on-behalf context from another host needs no session.
        XCTAssertEqual(places.wait(for: 17, rhost: "far.example", now: second)?.question, .lid)
    }

    func test_S61_aTimeoutIsRemoteForASecond_absentLogindMeansNobodyIsRemote() {
        var places = present()
        _ = places.wait(for: 16, rhost: nil, now: 0)
        places.sessionAnswered(16, .unavailable(LogindError(absent: false, message: "timeout")), now: 0)
        XCTAssertEqual(places.block(for: 16, rhost: nil, reader: nil)?.reason, .remote, "fail safe")
        XCTAssertEqual(places.wait(for: 16, rhost: nil, now: second), .init(question: .session, ask: true), "asked again")
        places.sessionAnswered(16, .unavailable(LogindError(absent: true, message: "logind is not running.")), now: second)
        XCTAssertFalse(places.logindPresent)
        XCTAssertNil(places.block(for: 16, rhost: nil, reader: nil))
        XCTAssertNil(places.wait(for: 16, rhost: nil, now: 2 * second))
    }

    func test_S62_closedAndDocked_orClosedWithABuiltInReader_isInaccessible() {
        var places = present()
        _ = places.lidAnswered(.success(LidState(closed: true, docked: false)), reader: "Synaptics", now: 0)
        XCTAssertFalse(places.inaccessible(reader: "Synaptics"), "undocked, not named built in")
        places.settings.builtInReaders = ["Synaptics"]
        XCTAssertTrue(places.inaccessible(reader: "Synaptics"))
        XCTAssertFalse(places.inaccessible(reader: "USB reader"))
        XCTAssertTrue(places.lidAnswered(.success(LidState(closed: true, docked: true)), reader: "USB reader", now: 0),
                      "docked: every reader, a change")
        XCTAssertEqual(places.block(for: 16, rhost: nil, reader: "USB reader"), BiometryBlock(.lidClosed))
        places.settings.lidClosedInaccessible = false
        XCTAssertNil(places.block(for: 16, rhost: nil, reader: "USB reader"))
    }

    func test_S63_whileSleepingEveryCheckIsBlocked() {
        var places = Whereabouts()
        XCTAssertFalse(places.mayBlock, "no logind, no remote context: the in-place path stays")
        places.sleeping = true
        XCTAssertTrue(places.mayBlock)
        XCTAssertEqual(places.block(for: 16, rhost: nil, reader: nil), BiometryBlock(.suspend))
    }
}
