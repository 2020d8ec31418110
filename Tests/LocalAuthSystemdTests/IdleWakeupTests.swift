// S-82 (issue 34 item 1): an idle daemon sleeps. Its threads' voluntary
// context switches (/proc/PID/task/*/status) are counted over a window of
// watchdog pings: with nothing due, the only wakeup is the ping itself. The
// window is measured in pings, not seconds (no timing assertion): ten pings
// at WatchdogSec/2 = 2 s are 20 s, 200 expiries of the former 100 ms ticker.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class IdleWakeupTests: XCTestCase {
    /// Pings in the window, and the wakeups allowed besides them (a STATUS=
    /// or a sync left over from the setup, the test's own signals).
    private static let pings = 10
    private static let slack = 10

    func test_S82_anIdleDaemonWithAWatcherConnectedWakesOnlyForItsWatchdogPings() throws {
        // Given a daemon under a watchdog of 4 s (a ping every 2 s), its
        // D-Bus API off (no bus here to retry), and a client that watches
        // uid 0 and then only holds its connection, as an agent does,
        let daemon = try NotifiedDaemon(configuration: "[Biometry]\nType=touchID\n[DBus]\nServe=no\n",
                                        watchdogMicros: 4_000_000)
        daemon.notify.waitFor("READY=1") { $0 == "READY=1" }
        let client = try daemon.connect()
        XCTAssertOK(try client.request("w watch uid=0"))
        XCTAssertEqual(try client.next(tag: "w").status, .state)
        daemon.notify.waitFor("STATUS with the watcher") { $0.hasPrefix("STATUS=Serving 1 connections") }
        daemon.notify.waitFor("WATCHDOG=1") { $0 == "WATCHDOG=1" }
        // when ten more pings pass,
        let before = try Self.switches(of: daemon.pid)
        for ping in 1...Self.pings { daemon.notify.waitFor("WATCHDOG=1 #\(ping)") { $0 == "WATCHDOG=1" } }
        let after = try Self.switches(of: daemon.pid)
        // then its threads woke about once per ping, not ten times a second.
        var total = 0
        var perThread: [String] = []
        for (thread, count) in after.sorted(by: { $0.key < $1.key }) {
            let woke = count - (before[thread] ?? 0)
            total += woke
            perThread.append("\(thread): \(woke)")
        }
        print("idle wakeups over \(Self.pings) pings: \(total) (\(perThread.joined(separator: ", ")))")
        XCTAssertLessThanOrEqual(total, Self.pings + Self.slack, "per thread: \(perThread)")
        XCTAssertEqual(try client.request("p ping").status, .ok, "the daemon still serves")
    }

    /// Voluntary context switches of every thread of `pid`, by thread id.
    static func switches(of pid: pid_t) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for thread in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                  let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else { continue }
            counts[thread] = count
        }
        return counts
    }
}
