// `localauthctl log`'s pager (Pager.swift) is safe under sudo, as systemd's
// is: as root, or with SUDO_UID set, $PAGER is not trusted and less runs with
// LESSSECURE=1; SYSTEMD_PAGERSECURE=0 opts out, =1 opts in for anyone;
// LOCALAUTHCTL_PAGER, then SYSTEMD_PAGER, then PAGER choose the pager
// otherwise; no terminal, `--no-pager` or PAGER=cat means no pager.
//
// The terminal is script(1)'s pty; `less` and the pagers are shell scripts
// first on PATH that record their environment and what they were given.
// Every run starts from an empty environment (env -i), so the test's own
// (a sudo's SUDO_UID, a PAGER) cannot decide the outcome.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class PagerTests: XCTestCase {
    var daemon: DaemonProcess!
    var bin = "", record = ""

    override func setUpWithError() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root (root's pager, and setpriv for a user's)") }
        guard access("/usr/bin/script", X_OK) == 0,
              access("/usr/bin/less", X_OK) == 0 || access("/bin/less", X_OK) == 0 else {
            throw XCTSkip("needs script(1) for a terminal, and less installed (Pager looks for it)")
        }
        daemon = try DaemonProcess(options: .forClients)
        let admin = try Admin(daemon.socketPath)
        try admin.ok("enroll uid=1000 template=paged")
        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)
        // A log any uid may read (a stopped daemon's copy; the real one is 0700).
        let state = daemon.stateDirectory
        for (path, mode) in [(daemon.directory.path, 0o711), (state, 0o711), (state + "/log", 0o755)] as [(String, mode_t)] {
            XCTAssertEqual(chmod(path, mode), 0, path)
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: state + "/log") {
            XCTAssertEqual(chmod(state + "/log/" + name, 0o644), 0, name)
        }
        bin = daemon.directory.path + "/bin"
        record = daemon.directory.path + "/record"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: record, withIntermediateDirectories: false)
        XCTAssertEqual(chmod(bin, 0o755), 0)
        XCTAssertEqual(chmod(record, 0o777), 0)
        for name in ["less", "userpager", "systemdpager", "ctlpager"] {
            let script = "#!/bin/sh\nenv > \(record)/\(name).env\ncat > \(record)/\(name).out\n"
            try script.write(toFile: bin + "/" + name, atomically: true, encoding: .utf8)
            XCTAssertEqual(chmod(bin + "/" + name, 0o755), 0)
        }
    }

    override func tearDown() {
        daemon = nil
        super.tearDown()
    }

    struct Paged {
        /// The pager that ran (its name), nil when none did.
        var pager: String?
        var environment: [String: String]
        /// What the pager was given.
        var input: String
        /// What reached the terminal (or stdout) directly.
        var output: String
    }

    /// `localauthctl log -D STATE ARGS` on a terminal (or without one), as
    /// root or as uid 65534, with exactly `environment` (and PATH).
    func page(asUser: Bool, _ environment: [String: String], _ arguments: [String] = [], terminal: Bool = true) throws -> Paged {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: record)) ?? [] {
            try FileManager.default.removeItem(atPath: record + "/" + name)
        }
        let command = (asUser ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : [])
            + [try ctlBinary(), "log", "-D", daemon.stateDirectory] + arguments
        let variables = (["PATH": bin + ":/usr/bin:/bin"].merging(environment) { $1 }).map { "\($0.key)=\($0.value)" }
        let program = terminal
            ? ["/usr/bin/script", "-qec", command.map { "'\($0)'" }.joined(separator: " "), "/dev/null"]
            : command
        let (code, out, err) = try runToCompletion("/usr/bin/env", ["-i"] + variables.sorted() + program)
        XCTAssertEqual(code, 0, err)
        let ran = ["less", "userpager", "systemdpager", "ctlpager"].filter { FileManager.default.fileExists(atPath: record + "/\($0).env") }
        XCTAssertLessThanOrEqual(ran.count, 1, "one pager at most: \(ran)")
        var recorded: [String: String] = [:]
        var input = ""
        if let pager = ran.first {
            for line in try String(contentsOfFile: record + "/\(pager).env", encoding: .utf8).split(separator: "\n") {
                if let equals = line.firstIndex(of: "=") { recorded[String(line[..<equals])] = String(line[line.index(after: equals)...]) }
            }
            input = try String(contentsOfFile: record + "/\(pager).out", encoding: .utf8)
        }
        return Paged(pager: ran.first, environment: recorded, input: input, output: out)
    }

    func testAsRootThePagerIsLessWithLessSecureWhateverPagerSays() throws {
        for environment in [["PAGER": "userpager"], ["LOCALAUTHCTL_PAGER": "ctlpager", "SYSTEMD_PAGER": "systemdpager"], [:]] {
            let paged = try page(asUser: false, environment)
            XCTAssertEqual(paged.pager, "less", "\(environment)")
            XCTAssertEqual(paged.environment["LESSSECURE"], "1", "\(environment)")
            XCTAssertEqual(paged.environment["LESS"], "FRSXK")
            XCTAssertTrue(paged.input.contains("enrollment-changed"), paged.input)
            XCTAssertFalse(paged.output.contains("enrollment-changed"), "the output went to the pager only")
        }
    }

    func testUnderSudoThePagerIsSecureToo() throws {
        let paged = try page(asUser: true, ["PAGER": "userpager", "SUDO_UID": "1000"])
        XCTAssertEqual(paged.pager, "less")
        XCTAssertEqual(paged.environment["LESSSECURE"], "1")
    }

    func testSystemdPagerSecureOptsOutAndIn() throws {
        for off in ["0", "no", "false"] {
            let root = try page(asUser: false, ["PAGER": "userpager", "SYSTEMD_PAGERSECURE": off])
            XCTAssertEqual(root.pager, "userpager", "SYSTEMD_PAGERSECURE=\(off) as root")
            XCTAssertNil(root.environment["LESSSECURE"])
            XCTAssertTrue(root.input.contains("enrollment-changed"))
        }
        let user = try page(asUser: true, ["PAGER": "userpager", "SYSTEMD_PAGERSECURE": "1"])
        XCTAssertEqual(user.pager, "less", "SYSTEMD_PAGERSECURE=1 for a user")
        XCTAssertEqual(user.environment["LESSSECURE"], "1")
        // Not a boolean: the default (secure as root) holds.
        let garbage = try page(asUser: false, ["PAGER": "userpager", "SYSTEMD_PAGERSECURE": "maybe"])
        XCTAssertEqual(garbage.pager, "less")
    }

    func testAUsersPagerIsTheirChoiceInOrder() throws {
        let plain = try page(asUser: true, ["PAGER": "userpager"])
        XCTAssertEqual(plain.pager, "userpager")
        XCTAssertNil(plain.environment["LESSSECURE"], "not root, not sudo: nothing locked down")
        XCTAssertTrue(plain.input.contains("enrollment-changed"), plain.input)
        XCTAssertEqual(try page(asUser: true, ["PAGER": "userpager", "SYSTEMD_PAGER": "systemdpager"]).pager, "systemdpager")
        XCTAssertEqual(try page(asUser: true, ["PAGER": "userpager", "SYSTEMD_PAGER": "systemdpager",
                                              "LOCALAUTHCTL_PAGER": "ctlpager"]).pager, "ctlpager")
        let none = try page(asUser: true, [:])
        XCTAssertEqual(none.pager, "less")
        XCTAssertNil(none.environment["LESSSECURE"])
    }

    func testNoTerminalNoPagerOrPagerCatPrintsDirectly() throws {
        let cases: [(asUser: Bool, environment: [String: String], arguments: [String], terminal: Bool)] = [
            (false, ["PAGER": "userpager"], [], false),
            (true, ["PAGER": "userpager"], [], false),
            (false, ["PAGER": "userpager", "SYSTEMD_PAGERSECURE": "0"], ["--no-pager"], true),
            (true, ["PAGER": "userpager"], ["--no-pager"], true),
            (true, ["PAGER": "cat"], [], true),
        ]
        for c in cases {
            let paged = try page(asUser: c.asUser, c.environment, c.arguments, terminal: c.terminal)
            XCTAssertNil(paged.pager, "\(c)")
            XCTAssertTrue(paged.output.contains("enrollment-changed"), "\(c): \(paged.output)")
        }
    }
}
