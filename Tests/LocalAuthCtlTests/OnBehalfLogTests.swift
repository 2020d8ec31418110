// AUDIT.md v1.1: `context-created` of an on-behalf context (S-42) shows
// `caller` (only when it differs from `uid`), `service`, `tty` and `rhost`,
// the same in `log -o json` and the short output an auditor reads.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class OnBehalfLogTests: CtlTestCase {
    /// On-behalf contexts on the simulated sensor: the test-only switch (S-52).
    override func setUpWithError() throws {
        daemon = try DaemonProcess(configuration: DaemonProcess.onBehalfTestConfiguration, options: .forClients)
        admin = try Admin(daemon.socketPath)
    }

    func test_S42_contextCreatedShowsCallerServiceTtyAndRhost() throws {
        try admin.ok("new uid=1000 service=sudo tty=/dev/pts/4 rhost=\"10.0.0.7\"")
        try admin.ok("new uid=0 service=login tty=tty1")
        try admin.ok("new")
        let json = try ctl(["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertEqual(json.code, 0, json.err)
        let created = json.lines.map { jsonObject($0) }.filter { $0["type"] as? String == "context-created" }
        XCTAssertEqual(created.count, 3, json.out)
        guard created.count == 3 else { return }
        XCTAssertEqual(created[0]["uid"] as? Int, 1000)
        XCTAssertEqual(created[0]["caller"] as? Int, 0)
        XCTAssertEqual(created[0]["service"] as? String, "sudo")
        XCTAssertEqual(created[0]["tty"] as? String, "/dev/pts/4")
        XCTAssertEqual(created[0]["rhost"] as? String, "10.0.0.7")
        XCTAssertNil(created[1]["caller"], "root for itself: caller equals uid and is left out")
        XCTAssertEqual(created[1]["service"] as? String, "login")
        XCTAssertNil(created[1]["rhost"])
        for key in ["caller", "service", "tty", "rhost"] { XCTAssertNil(created[2][key], "a plain new has no \(key)") }

        let short = try ctl(["log", "-D", daemon.stateDirectory, "--no-pager"])
        let line = try XCTUnwrap(short.lines.first { $0.contains("context-created") && $0.contains("uid=1000") }, short.out)
        for field in ["caller=0", "service=sudo", "tty=/dev/pts/4", "rhost=10.0.0.7"] {
            XCTAssertTrue(line.contains(field), "\(field) in \(line)")
        }
    }
}
