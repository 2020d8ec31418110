// A private system bus (RECIPES.md "A private system bus"): dbus-daemon with
// a configuration of the system bus's kind — `<type>system</type>`, EXTERNAL
// authentication, Debian's default-deny policy for method calls — that
// includes the project's shipped policy, dbus/io.github.localauthd.LocalAuthentication1.conf.
// The shipped policy lets only the user `localauthd` own the name; here the
// daemon runs as the test's user, so the one copy written for the bus names
// that user instead (`owner`), and nothing else of the file changes.
// Missing tools skip the test.
import Foundation
import Glibc
import XCTest

public final class PrivateSystemBus {
    public let directory: TemporaryDirectory
    public var address: String { "unix:path=\(directory.path)/bus" }
    private var pid: pid_t = 0

    /// The shipped policy file (the repository's).
    public static var policyPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/io.github.localauthd.LocalAuthentication1.conf").path
    }

    /// Starts the bus; `owner`: the user name the policy lets own the
    /// daemon's name (the test daemon's).
    public init(owner: String = "root") throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/busctl"] where access(tool, X_OK) != 0 {
            throw XCTSkip("\(tool) is not installed (scripts/install-deps installs dbus)")
        }
        directory = TemporaryDirectory(prefix: "localauth-bus-")
        let policy = readText(PrivateSystemBus.policyPath)
        guard policy.contains("<policy user=\"localauthd\">") else {
            throw HarnessError("the shipped policy \(PrivateSystemBus.policyPath) does not name the user localauthd")
        }
        try directory.write("policy.conf", policy.replacingOccurrences(of: "<policy user=\"localauthd\">",
                                                                        with: "<policy user=\"\(owner)\">"))
        try directory.write("bus.conf", """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
              </policy>
              <include>\(directory.path)/policy.conf</include>
            </busconfig>

            """)
        pid = try spawn("/usr/bin/dbus-daemon", ["--config-file=\(directory.path)/bus.conf", "--nofork", "--nopidfile"],
                        stderrPath: directory.path + "/dbus.log")
        guard waitUntil({ access(self.directory.path + "/bus", F_OK) == 0 }) else {
            throw HarnessError("the private system bus did not start: \(readText(directory.path + "/dbus.log"))")
        }
    }

    deinit {
        if pid > 0 {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 10)
        }
    }

    /// Clients' environment: this bus is their system bus.
    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    /// `busctl --address=BUS ARGUMENTS` (exit code, stdout, stderr).
    @discardableResult
    public func busctl(_ arguments: [String]) throws -> (Int32, String, String) {
        try runToCompletion("/usr/bin/busctl", ["--address=\(address)"] + arguments, timeout: 20)
    }
}
