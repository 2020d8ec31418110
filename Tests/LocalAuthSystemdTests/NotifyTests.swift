// sd_notify without systemd: a datagram socket as NOTIFY_SOCKET, the daemon
// spawned with WATCHDOG_USEC and WATCHDOG_PID = its own pid, and the
// datagrams checked in order: READY (after replay and listen, with STATUS),
// STATUS kept current, WATCHDOG, RELOADING then READY on SIGHUP, STOPPING.
// Also the journal fields in their stderr form (no journald here), and the
// test hook that hangs the event loop to prove the pings come from it.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

/// A daemon under a fake service manager: DaemonProcess with NOTIFY_SOCKET,
/// WATCHDOG_USEC and WATCHDOG_PID = its own pid.
final class NotifiedDaemon {
    let scratch = TemporaryDirectory()
    let notify: NotifyReceiver
    let daemon: DaemonProcess

    init(configuration: String = "[Biometry]\nType=touchID\n", watchdogMicros: Int = 400_000,
         extraEnvironment: [String: String] = [:]) throws {
        notify = try NotifyReceiver(path: scratch.path + "/notify")
        var environment = ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": String(watchdogMicros)]
        for (key, value) in extraEnvironment { environment[key] = value }
        daemon = try DaemonProcess(configuration: configuration,
                                   options: .init(environment: environment, ownWatchdogPID: true))
    }

    var pid: pid_t { daemon.pid ?? -1 }
    var output: String { daemon.output }
    func signal(_ signal: Int32) { daemon.signal(signal) }
    func wait(timeout: Double = 20) -> Int32? { daemon.awaitExit(timeout: timeout) }
    func connect() throws -> Client { try daemon.connect() }
}

final class NotifyTests: XCTestCase {
    /// Biometry locked out after two failures; three readings per evaluation.
    private static let lockingAtTwo = "[Biometry]\nType=touchID\nLockoutThreshold=2\nAttemptsPerEvaluation=3\n"

    /// Once READY: uid 0 with passcode 4321 and one template, a connection,
    /// and a new context on it.
    private func readyOwner(_ daemon: NotifiedDaemon) throws -> (Client, String) {
        daemon.notify.waitFor("READY=1") { $0 == "READY=1" }
        let client = try daemon.connect()
        XCTAssertTrue(try client.requestLine("s1 set-passcode secret=4321").hasPrefix("s1 OK"))
        XCTAssertTrue(try client.requestLine("e1 enroll uid=0").hasPrefix("e1 OK"))
        let created = try client.requestLine("c1 new")
        return (client, try XCTUnwrap(created.split(separator: "=").last.map(String.init)))
    }

    func testReadyStatusWatchdogReloadStoppingInOrder() throws {
        let daemon = try NotifiedDaemon()
        let notify = daemon.notify

        let ready = try XCTUnwrap(notify.waitFor("READY=1") { $0 == "READY=1" })
        XCTAssertEqual(notify.messages.first, ready, "READY=1 must be the first datagram")
        XCTAssertTrue(ready.contains("MAINPID=\(daemon.pid)"), ready)
        XCTAssertTrue(ready.contains("STATUS=Serving 0 connections, 0 contexts, 0 users locked out, log seq "), ready)
        // READY=1 comes after listen: the socket accepts now.
        let client = try daemon.connect()

        // WATCHDOG=1 from the loop, at half of WATCHDOG_USEC.
        notify.waitFor("WATCHDOG=1") { $0 == "WATCHDOG=1" }

        // STATUS= follows what the daemon serves.
        XCTAssertTrue(try client.requestLine("c1 new").hasPrefix("c1 OK ctx="))
        notify.waitFor("STATUS with one connection and one context") {
            $0.hasPrefix("STATUS=Serving 1 connections, 1 contexts, 0 users locked out, log seq ")
        }

        // SIGHUP: RELOADING=1 (with MONOTONIC_USEC), then READY=1 again.
        daemon.signal(SIGHUP)
        let reloading = try XCTUnwrap(notify.waitFor("RELOADING=1") { $0 == "RELOADING=1" })
        XCTAssertTrue(reloading.contains("MONOTONIC_USEC="), reloading)
        notify.waitFor("READY=1 after RELOADING=1") { $0 == "READY=1" }
        XCTAssertEqual(try client.requestLine("p1 ping"), "p1 OK", "the connection survives a reload")

        daemon.signal(SIGTERM)
        notify.waitFor("STOPPING=1") { $0 == "STOPPING=1" }
        XCTAssertEqual(daemon.wait(), 0, daemon.output)

        // The whole conversation, in order.
        func index(_ line: String, after start: Int = -1) -> Int? {
            notify.messages.indices.first { $0 > start && notify.messages[$0].split(separator: "\n").contains(Substring(line)) }
        }
        let firstReady = try XCTUnwrap(index("READY=1"))
        let firstWatchdog = try XCTUnwrap(index("WATCHDOG=1"))
        let reload = try XCTUnwrap(index("RELOADING=1"))
        let secondReady = try XCTUnwrap(index("READY=1", after: reload))
        let stopping = try XCTUnwrap(index("STOPPING=1"))
        XCTAssertLessThan(firstReady, firstWatchdog)
        XCTAssertLessThan(firstReady, reload)
        XCTAssertLessThan(secondReady, stopping)
        XCTAssertNil(index("READY=1", after: stopping), "\(notify.messages)")
        XCTAssertNil(index("WATCHDOG=1", after: stopping), "no pings after STOPPING=1: \(notify.messages)")
    }

    /// Lockout engaged and lifted: STATUS counts the locked-out user, and the
    /// entries (stderr form here) carry the MESSAGE fields.
    func testLockoutStatusAndLogFields() throws {
        let daemon = try NotifiedDaemon(configuration: Self.lockingAtTwo)
        let notify = daemon.notify
        let (client, ctx) = try readyOwner(daemon)
        XCTAssertTrue(try client.requestLine("v1 evaluate ctx=\(ctx) policy=biometrics reason=test").hasPrefix("v1 PROMPT"))
        XCTAssertTrue(try client.requestLine("n1 sensor uid=0 result=nomatch").hasPrefix("n1 OK"))
        XCTAssertTrue(try client.requestLine("n2 sensor uid=0 result=nomatch").hasPrefix("n2 OK"))
        notify.waitFor("STATUS with one user locked out") { $0.hasPrefix("STATUS=") && $0.contains(", 1 users locked out,") }
        let status = try client.requestLine("u1 status")
        XCTAssertTrue(status.contains("locked-out=true"), status)

        // The passcode lifts the biometric lockout.
        XCTAssertTrue(try client.requestLine("c2 new").hasPrefix("c2 OK"))
        let second = try client.requestLine("c3 new")
        let ctx2 = try XCTUnwrap(second.split(separator: "=").last.map(String.init))
        let prompt = try client.requestLine("v2 evaluate ctx=\(ctx2) policy=owner reason=test")
        XCTAssertTrue(prompt.contains("kind=passcode"), prompt)
        XCTAssertEqual(try client.requestLine("p1 passcode ctx=\(ctx2) secret=4321"), "p1 OK")
        XCTAssertTrue(try client.nextLine(tag: "v2").hasPrefix("v2 OK method=passcode"))
        notify.waitFor("STATUS with no user locked out") { $0.hasPrefix("STATUS=") && $0.contains(", 0 users locked out,") }

        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0)
        let lines = daemon.output.split(separator: "\n").map(String.init)
        let engaged = try XCTUnwrap(lines.first { $0.contains("Biometry locked out for uid 0") }, daemon.output)
        XCTAssertTrue(engaged.contains("LOCALAUTH_UID=0"), engaged)
        XCTAssertTrue(engaged.contains("LOCALAUTH_CONTEXT=\(ctx)"), engaged)
        XCTAssertNotNil(engaged.range(of: #"LOCALAUTH_SEQ=[1-9][0-9]*"#, options: .regularExpression), engaged)
        let lifted = try XCTUnwrap(lines.first { $0.contains("Lockout lifted for uid 0") }, daemon.output)
        XCTAssertTrue(lifted.contains("LOCALAUTH_UID=0") && lifted.contains("LOCALAUTH_CONTEXT=\(ctx2)"), lifted)
        XCTAssertTrue(lines.contains { $0.hasPrefix("localauthd: Started:") && $0.contains("LOCALAUTH_SEQ=") }, daemon.output)
        XCTAssertTrue(lines.contains { $0 == "localauthd: Stopped." }, daemon.output)
    }

    /// S-6's admin lock is journalled when it engages, also when the user's
    /// biometry was locked out before (found by an audit: the entry was
    /// skipped because the uid already counted as locked out).
    func testAdminLockIsJournalledAfterABiometricLockout() throws {
        let daemon = try NotifiedDaemon(configuration: Self.lockingAtTwo + "[Passcode]\nDelayAfterFailures=10\nMaxPasscodeFailures=2\n")
        let (client, ctx) = try readyOwner(daemon)
        XCTAssertTrue(try client.requestLine("v1 evaluate ctx=\(ctx) policy=owner reason=test").hasPrefix("v1 PROMPT"))
        XCTAssertTrue(try client.requestLine("n1 sensor uid=0 result=nomatch").hasPrefix("n1 OK"))
        XCTAssertTrue(try client.nextLine(tag: "v1").hasPrefix("v1 PROMPT"))
        XCTAssertTrue(try client.requestLine("n2 sensor uid=0 result=nomatch").hasPrefix("n2 OK"))
        // Biometry is locked out now; policy 2 moves to the passcode.
        XCTAssertTrue(try client.nextLine(tag: "v1").contains("kind=passcode"))
        XCTAssertEqual(try client.requestLine("p1 passcode ctx=\(ctx) secret=0000"), "p1 OK")
        XCTAssertTrue(try client.nextLine(tag: "v1").contains("kind=passcode"))
        XCTAssertEqual(try client.requestLine("p2 passcode ctx=\(ctx) secret=1111"), "p2 OK")
        XCTAssertTrue(try client.nextLine(tag: "v1").contains("locked=admin"))
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0)
        let lines = daemon.output.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.contains("Biometry locked out for uid 0") }, daemon.output)
        let locked = try XCTUnwrap(lines.first { $0.contains("Passcode locked for uid 0 until an administrator resets it") },
                                   daemon.output)
        XCTAssertTrue(locked.contains("LOCALAUTH_CONTEXT=\(ctx)"), locked)
    }

    /// The test hook (LOCALAUTHD_TEST_HANG=N, then SIGUSR2) blocks the event
    /// loop: no WATCHDOG=1 while it hangs, so systemd would restart it.
    func testHungLoopStopsWatchdogPings() throws {
        let hang = 4
        // Pings every 100-200 ms while the loop runs: dozens during the hang
        // if they came from anywhere but the loop.
        let daemon = try NotifiedDaemon(watchdogMicros: 200_000, extraEnvironment: ["LOCALAUTHD_TEST_HANG": String(hang)])
        let notify = daemon.notify
        notify.waitFor("READY=1") { $0 == "READY=1" }
        notify.waitFor("WATCHDOG=1") { $0 == "WATCHDOG=1" }
        notify.waitFor("another WATCHDOG=1") { $0 == "WATCHDOG=1" }

        daemon.signal(SIGUSR2)
        notify.waitFor("the hook's STATUS") { $0.hasPrefix("STATUS=Test hook: event loop hung for \(hang) s") }
        let hungAt = notify.messages.count
        // A request made while the loop hangs is answered once it is back.
        let client = try daemon.connect()
        client.timeout = Double(hang) + 30
        XCTAssertEqual(try client.requestLine("p1 ping"), "p1 OK")
        _ = notify.drain()
        let during = notify.messages[hungAt...].filter { $0.split(separator: "\n").contains("WATCHDOG=1") }.count
        XCTAssertLessThanOrEqual(during, 2, "WATCHDOG=1 kept coming while the loop hung: \(Array(notify.messages[hungAt...]))")
        // And the pings resume.
        notify.waitFor("WATCHDOG=1 after the hang") { $0 == "WATCHDOG=1" }
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0, daemon.output)
    }

    /// Without LOCALAUTHD_TEST_HANG, SIGUSR2 does nothing at all.
    func testSIGUSR2IsIgnoredWithoutTheHook() throws {
        let daemon = try NotifiedDaemon()
        daemon.notify.waitFor("READY=1") { $0 == "READY=1" }
        let client = try daemon.connect()
        daemon.signal(SIGUSR2)
        XCTAssertEqual(try client.requestLine("p1 ping"), "p1 OK")
        XCTAssertNil(daemon.wait(timeout: 0), "SIGUSR2 must not kill the daemon")
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0)
        XCTAssertFalse(daemon.notify.messages.contains { $0.contains("Test hook") })
        XCTAssertFalse(daemon.output.contains("Test hook"))
    }
}
