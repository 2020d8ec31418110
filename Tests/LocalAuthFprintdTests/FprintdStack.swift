// A real fingerprint stack without hardware (RECIPES.md): a private D-Bus
// daemon, python3-dbusmock's polkitd allowing fprintd's actions, and
// Debian's fprintd with libfprint's virtual device, whose socket takes
// `SCAN <id>`, `RETRY <n>`, `ERROR <n>`, `UNPLUG`. The daemon under test
// talks to it through `FprintdBus=`. Missing pieces skip the tests with a
// message (scripts/install-deps installs them). Waits are safety nets only:
// each one polls for an observable state (fprintd's finger-needed, a reply).
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class FprintdStack {
    static let fprintd = "/usr/libexec/fprintd"
    let directory: TemporaryDirectory
    var bus: String { "unix:path=\(directory.path)/bus" }
    var deviceSocket: String { directory.path + "/virtual-device" }
    private var busPID: pid_t = 0
    private var polkitPID: pid_t = 0
    private(set) var fprintdPID: pid_t = 0

    /// Skips (XCTSkip) when fprintd, dbus-daemon, dbusmock or busctl are missing.
    init() throws {
        for tool in [FprintdStack.fprintd, "/usr/bin/dbus-daemon", "/usr/bin/busctl", "/usr/bin/fprintd-enroll",
                     "/usr/bin/python3"] where access(tool, X_OK) != 0 {
            throw XCTSkip("\(tool) is not installed (scripts/install-deps installs fprintd, dbus, python3-dbusmock)")
        }
        let probe = try runToCompletion("/usr/bin/python3", ["-c", "import dbusmock, dbus"])
        guard probe.0 == 0 else { throw XCTSkip("python3-dbusmock / python3-dbus are not installed: \(probe.2)") }
        directory = TemporaryDirectory(prefix: "localauth-fprintd-")
        for sub in ["state", "run"] { mkdir(directory.path + "/" + sub, 0o700) }
        busPID = try spawn("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(bus)"],
                           stderrPath: directory.path + "/dbus.log")
        try until("the private bus accepts") { access(directory.path + "/bus", F_OK) == 0 }
        polkitPID = try spawn("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "polkitd"],
                              stdoutPath: directory.path + "/polkit.log", stderrPath: directory.path + "/polkit.err",
                              environment: busEnvironment)
        try until("the polkit stand-in allows fprintd's actions") {
            (try? self.busctl(["call", "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                               "org.freedesktop.DBus.Mock", "SetAllowed", "as", "3", "net.reactivated.fprint.device.verify",
                               "net.reactivated.fprint.device.enroll", "net.reactivated.fprint.device.setusername"]).0) == 0
        }
        try startFprintd()
    }

    deinit {
        for pid in [fprintdPID, polkitPID, busPID] where pid > 0 {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 10)
        }
    }

    var busEnvironment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": bus, "DBUS_SESSION_BUS_ADDRESS": bus] }

    func startFprintd() throws {
        fprintdPID = try spawn(FprintdStack.fprintd, ["-t"], stdoutPath: directory.path + "/fprintd.log",
                               stderrPath: directory.path + "/fprintd.err", appendOutput: true, environment: busEnvironment.merging([
            "FP_VIRTUAL_DEVICE": deviceSocket, "FP_DRIVERS_WHITELIST": "virtual_device",
            "STATE_DIRECTORY": directory.path + "/state", "RUNTIME_DIRECTORY": directory.path + "/run",
        ]) { $1 })
        try until("fprintd has its virtual reader") {
            (try? self.busctl(["call", "net.reactivated.Fprint", "/net/reactivated/Fprint/Manager",
                               "net.reactivated.Fprint.Manager", "GetDefaultDevice"]).0) == 0
        }
    }

    func killFprintd() {
        Glibc.kill(fprintdPID, SIGKILL)
        _ = waitForExit(fprintdPID, timeout: 10)
        fprintdPID = 0
    }

    @discardableResult
    func busctl(_ arguments: [String]) throws -> (Int32, String, String) {
        try runToCompletion("/usr/bin/busctl", ["--address=\(bus)"] + arguments, timeout: 20)
    }

    /// Whether fprintd waits for a finger now (its `finger-needed`).
    var fingerNeeded: Bool {
        let out = (try? busctl(["get-property", "net.reactivated.Fprint", "/net/reactivated/Fprint/Device/0",
                                "net.reactivated.Fprint.Device", "finger-needed"]))?.1 ?? ""
        return out.hasPrefix("b true")
    }

    /// Sends a command to the virtual device once fprintd waits for a
    /// finger (a SCAN sent earlier may be lost, RECIPES.md).
    func device(_ command: String, waitForFinger: Bool = true) throws {
        if waitForFinger { try until("fprintd waits for a finger") { self.fingerNeeded } }
        let script = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n"
            + "s.sendall((sys.argv[2]+'\\n').encode())\ns.close()\n"
        let result = try runToCompletion("/usr/bin/python3", ["-c", script, deviceSocket, command])
        guard result.0 == 0 else { throw HarnessError("virtual device \(command): \(result.2)") }
    }

    /// Enrolls `finger` for `user` with fprintd-enroll, the virtual device
    /// scanning print `id` at every stage.
    func enroll(_ user: String, finger: String, id: String) throws {
        let log = directory.path + "/enroll-\(user)-\(finger).log"
        // Line-buffered, so each stage's result is in the log when it happens.
        let pid = try spawn("/usr/bin/stdbuf", ["-oL", "/usr/bin/fprintd-enroll", "-f", finger, user], stdoutPath: log,
                            stderrPath: log + ".err", environment: busEnvironment)
        var exited: Int32?
        var sent = 0
        while exited == nil {
            guard sent < 20 else { throw HarnessError("fprintd-enroll did not finish: \(readText(log))") }
            try until("fprintd-enroll waits for a finger") {
                exited = waitForExit(pid, timeout: 0)
                return exited != nil || self.fingerNeeded
            }
            if exited != nil { break }
            try device("SCAN \(id)", waitForFinger: false)
            sent += 1
            try until("the enroll stage is taken") {
                exited = waitForExit(pid, timeout: 0)
                return exited != nil || self.stageCount(log) >= sent
            }
        }
        guard readText(log).contains("enroll-completed") else { throw HarnessError("enroll failed: \(readText(log))") }
    }

    private func stageCount(_ log: String) -> Int {
        readText(log).components(separatedBy: "Enroll result:").count - 1
    }

    func delete(_ user: String) throws {
        let result = try runToCompletion("/usr/bin/fprintd-delete", [user], environment: busEnvironment)
        guard result.0 == 0 else { throw HarnessError("fprintd-delete: \(result.1) \(result.2)") }
    }

    /// A Claim from another D-Bus client: succeeds only if nobody (the
    /// daemon) holds the device. busctl's connection ends at once, which
    /// releases its claim again.
    func claimSucceeds(_ user: String) -> Bool {
        (try? busctl(["call", "net.reactivated.Fprint", "/net/reactivated/Fprint/Device/0",
                      "net.reactivated.Fprint.Device", "Claim", "s", user]).0) == 0
    }
}

/// `waitUntil`, failing with `what` when the safety net runs out.
func until(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) throws {
    guard try waitUntil(safetyNet: timeout, condition) else { throw HarnessError("gave up waiting: \(what)") }
}
