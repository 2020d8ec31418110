// The shared logind client (Logind.swift) against python3-dbusmock's logind
// on a private bus: a process's session and whether it is remote (S-61),
// the lid and the dock (S-62), PrepareForSleep (S-63), and logind absent.
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class LogindTests: XCTestCase {
    /// Drives `bus` until `done()` holds (a safety net, not a timing assertion).
    func pump(_ bus: DBusConnection, until done: () -> Bool) throws {
        let answered = try waitUntil(safetyNet: 20) {
            var descriptor = pollfd(fd: bus.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 50)
            try bus.process()
            return done()
        }
        XCTAssertTrue(answered, "logind's answer never came")
    }

    func lookup(_ logind: Logind, pid: Int32) throws -> SessionLookup? {
        var answer: SessionLookup?
        logind.session(ofProcess: pid, timeoutMicros: 5_000_000) { answer = $0 }
        try pump(logind.bus) { answer != nil }
        return answer
    }

    func test_S61_aProcessInARemoteSessionIsRemoteWithItsHost_aLocalOneIsNot_anUnknownOneHasNone() throws {
        let mock = try LogindMock()
        try mock.addSession("c7", uid: 1000, user: "alice", remote: true, remoteHost: "laptop.example.org", pid: 4242)
        try mock.addSession("2", uid: 1001, user: "bob", pid: 4343)
        let logind = Logind(bus: try DBusConnection(address: mock.bus))

        guard case .session(let remote)? = try lookup(logind, pid: 4242) else { return XCTFail("no session for 4242") }
        XCTAssertEqual(remote.id, "c7")
        XCTAssertEqual(remote.uid, 1000)
        XCTAssertTrue(remote.remote)
        XCTAssertEqual(remote.remoteHost, "laptop.example.org")
        XCTAssertEqual(remote.path, "/org/freedesktop/login1/session/c7")
        XCTAssertTrue(remote.isOwned(by: 1000))
        XCTAssertFalse(remote.isOwned(by: 1001))

        guard case .session(let local)? = try lookup(logind, pid: 4343) else { return XCTFail("no session for 4343") }
        XCTAssertFalse(local.remote)
        XCTAssertEqual(local.seat, "seat0")
        XCTAssertEqual(local.uid, 1001)

        XCTAssertEqual(try lookup(logind, pid: 99999), .noSession)
    }

    func test_S62_theLidAndTheDockAreReadAsLogindReportsThem() throws {
        let mock = try LogindMock()
        let logind = Logind(bus: try DBusConnection(address: mock.bus))
        func read() throws -> LidState? {
            var answer: Result<LidState, LogindError>?
            logind.lid(timeoutMicros: 5_000_000) { answer = $0 }
            try pump(logind.bus) { answer != nil }
            return try answer?.get()
        }
        XCTAssertEqual(try read(), LidState(closed: false, docked: false))
        try mock.setLid(closed: true, docked: true)
        XCTAssertEqual(try read(), LidState(closed: true, docked: true))
        try mock.setLid(closed: true, docked: false)
        XCTAssertEqual(try read(), LidState(closed: true, docked: false))
    }

    func test_S63_prepareForSleepFromLogindReachesTheWatcherBothWays() throws {
        let mock = try LogindMock()
        let logind = Logind(bus: try DBusConnection(address: mock.bus))
        var seen: [Bool] = []
        try logind.watchSleep { seen.append($0) }
        // The match is asynchronous: let AddMatch reach the bus first.
        var matched = false
        logind.lid(timeoutMicros: 5_000_000) { _ in matched = true }
        try pump(logind.bus) { matched }
        try mock.prepareForSleep(true)
        try pump(logind.bus) { seen == [true] }
        try mock.prepareForSleep(false)
        try pump(logind.bus) { seen == [true, false] }
    }

    func test_S61_noLogindOnTheBusIsAbsent_notATimeout() throws {
        let directory = TemporaryDirectory(prefix: "localauth-nologind-")
        let address = "unix:path=\(directory.path)/bus"
        let pid = try spawn("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(address)"])
        defer {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 10)
        }
        XCTAssertTrue(waitUntil { access(directory.path + "/bus", F_OK) == 0 })
        let logind = Logind(bus: try DBusConnection(address: address))
        guard case .unavailable(let error)? = try lookup(logind, pid: getpid()) else { return XCTFail("expected unavailable") }
        XCTAssertTrue(error.absent, error.message)
        XCTAssertEqual(error.message, "logind is not running.")
    }
}
