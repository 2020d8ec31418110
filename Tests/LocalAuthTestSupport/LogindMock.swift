// logind without systemd (RECIPES.md "logind, a pty and a display in
// tests"): a private dbus-daemon and python3-dbusmock's logind template on
// it. The template has no GetSessionByPID, no LidClosed/Docked and never
// sends PrepareForSleep; this stack adds the method (answering from a
// pid -> session table the test fills), the two properties, and sends the
// signal through dbusmock's EmitSignal. Missing pieces skip the test.
import Foundation
import Glibc
import XCTest

public final class LogindMock {
    public let directory: TemporaryDirectory
    public var bus: String { "unix:path=\(directory.path)/bus" }
    private var busPID: pid_t = 0
    private var logindPID: pid_t = 0

    /// Starts the bus and the mock; throws XCTSkip when a tool is missing.
    /// `bus`: an existing private bus to join (e.g. fprintd's), else a new one.
    public init(bus existing: String? = nil, directory existingDirectory: TemporaryDirectory? = nil) throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/busctl", "/usr/bin/python3"] where access(tool, X_OK) != 0 {
            throw XCTSkip("\(tool) is not installed (scripts/install-deps installs dbus, python3-dbusmock)")
        }
        let probe = try runToCompletion("/usr/bin/python3", ["-c", "import dbusmock, dbus"])
        guard probe.0 == 0 else { throw XCTSkip("python3-dbusmock / python3-dbus are not installed: \(probe.2)") }
        directory = existingDirectory ?? TemporaryDirectory(prefix: "localauth-logind-")
        if existing == nil {
            busPID = try spawn("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(bus)"],
                               stderrPath: directory.path + "/dbus.log")
            guard waitUntil({ access(directory.path + "/bus", F_OK) == 0 }) else { throw HarnessError("no private bus") }
        }
        logindPID = try spawn("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
                              stdoutPath: directory.path + "/logind.log", stderrPath: directory.path + "/logind.err",
                              environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus, "DBUS_SESSION_BUS_ADDRESS": bus])
        guard waitUntil({ (try? self.busctl(["status", "org.freedesktop.login1"]).0) == 0 }) else {
            throw HarnessError("the logind mock did not start: \(readText(directory.path + "/logind.err"))")
        }
        try call("AddProperties", "sa{sv}", "org.freedesktop.login1.Manager", "2",
                 "LidClosed", "b", "false", "Docked", "b", "false")
        // pid -> session path, kept in the mock's own namespace.
        try call("AddMethod", "sssss", "org.freedesktop.login1.Manager", "GetSessionByPID", "u", "o", """
            table = getattr(self, 'session_by_pid', {})
            if args[0] not in table:
                raise dbus.exceptions.DBusException('PID %d does not belong to any known session' % args[0], name='org.freedesktop.login1.NoSessionForPID')
            ret = table[args[0]]
            """)
        try call("AddMethod", "sssss", "org.freedesktop.login1.Manager", "MapPID", "us", "", """
            table = getattr(self, 'session_by_pid', {})
            table[args[0]] = dbus.ObjectPath('/org/freedesktop/login1/session/' + args[1])
            self.session_by_pid = table
            """)
        // The template's GetUser adds a uint to a string (a TypeError); as
        // logind, it names the user's object, or answers NoSuchUser.
        try call("AddMethod", "sssss", "org.freedesktop.login1.Manager", "GetUser", "u", "o", """
            path = '/org/freedesktop/login1/user/%d' % args[0]
            if path not in objects:
                raise dbus.exceptions.DBusException('No user %d' % args[0], name='org.freedesktop.login1.NoSuchUser')
            ret = dbus.ObjectPath(path)
            """)
    }

    deinit {
        for pid in [logindPID, busPID] where pid > 0 {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 10)
        }
    }

    @discardableResult
    public func busctl(_ arguments: [String]) throws -> (Int32, String, String) {
        try runToCompletion("/usr/bin/busctl", ["--address=\(bus)"] + arguments, timeout: 20)
    }

    /// A method of the mock's Manager object (dbusmock's Mock interface, or
    /// one added to the Manager).
    func call(_ method: String, _ signature: String, _ arguments: String..., interface: String = "org.freedesktop.DBus.Mock") throws {
        let result = try busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1", interface, method, signature]
                                + arguments)
        guard result.0 == 0 else { throw HarnessError("logind mock \(method): \(result.2)") }
    }

    /// A session `id` of `uid`, remote or not, that process `pid` belongs to.
    public func addSession(_ id: String, uid: UInt32, user: String, remote: Bool = false, remoteHost: String = "",
                           pid: pid_t? = nil) throws {
        try call("AddSession", "ssusb", id, "seat0", String(uid), user, "true")
        if remote || !remoteHost.isEmpty {
            let path = "/org/freedesktop/login1/session/" + id
            for (name, value) in [("Remote", ["b", remote ? "true" : "false"]), ("RemoteHost", ["s", remoteHost])] {
                let result = try busctl(["call", "org.freedesktop.login1", path, "org.freedesktop.DBus.Properties", "Set",
                                         "ssv", "org.freedesktop.login1.Session", name] + value)
                guard result.0 == 0 else { throw HarnessError("logind mock: setting \(name): \(result.2)") }
            }
        }
        if let pid { try mapPID(pid, to: id) }
    }

    /// User `uid`'s display session (its User object's `Display`) is now `id`
    /// (S-65: what a process in no session stands for). The user must exist
    /// (a session of theirs added first).
    public func setDisplay(uid: UInt32, to id: String) throws {
        let result = try busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1/user/\(uid)",
                                 "org.freedesktop.DBus.Properties", "Set", "ssv", "org.freedesktop.login1.User", "Display",
                                 "(so)", id, "/org/freedesktop/login1/session/" + id])
        guard result.0 == 0 else { throw HarnessError("logind mock: setting Display: \(result.2)") }
    }

    /// Process `pid` now belongs to session `id` (GetSessionByPID answers it).
    public func mapPID(_ pid: pid_t, to id: String) throws {
        try call("MapPID", "us", String(pid), id, interface: "org.freedesktop.login1.Manager")
    }

    /// Sets the Manager's LidClosed and Docked.
    public func setLid(closed: Bool, docked: Bool) throws {
        for (name, value) in [("LidClosed", closed), ("Docked", docked)] {
            let result = try busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1",
                                     "org.freedesktop.DBus.Properties", "Set", "ssv", "org.freedesktop.login1.Manager",
                                     name, "b", value ? "true" : "false"])
            guard result.0 == 0 else { throw HarnessError("logind mock: setting \(name): \(result.2)") }
        }
    }

    /// Sends PrepareForSleep(sleeping) as logind would.
    public func prepareForSleep(_ sleeping: Bool) throws {
        try call("EmitSignal", "sssav", "org.freedesktop.login1.Manager", "PrepareForSleep", "b", "1", "b",
                 sleeping ? "true" : "false")
    }
}
