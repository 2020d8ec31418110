// A systemd-journald of the test's own (RECIPES "A journald of your own"):
// a mount namespace held by a `sleep`, an empty tmpfs on its /run, a
// journald.conf drop-in with the rate limit the test wants, and Debian's
// systemd-journald started in it. Nothing of the host's /run or journal is
// touched; everything goes with the holder.
//
// journald rate-limits only entries it can attribute to a unit (it reads the
// sender's cgroup), so `Unit` is a cgroup of the test's own, named like a
// service, under the cgroup2 hierarchy that journald reads; `launch` puts a
// daemon in it with its stderr connected to the journal as systemd would
// (JOURNAL_STREAM), so that its entries are the unit's. Needs root, nsenter
// and a writable cgroup2: otherwise the test is skipped, saying why.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class PrivateJournal {
    let directory = TemporaryDirectory(prefix: "localauth-journal-")
    /// The holder: its mount namespace is the journal's.
    let holder: pid_t
    let journald: pid_t

    /// journald's RateLimitIntervalSec= and RateLimitBurst=, in a drop-in.
    init(rateLimitInterval: String, rateLimitBurst: Int) throws {
        guard getuid() == 0 else { throw XCTSkip("a private journald needs root (mount namespace, cgroup)") }
        for tool in ["/usr/bin/unshare", "/usr/bin/nsenter", "/lib/systemd/systemd-journald", "/usr/bin/journalctl",
                     "/usr/bin/systemd-cat"] where access(tool, X_OK) != 0 {
            throw XCTSkip("\(tool) is missing")
        }
        let holder = try spawn("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sleep", "3600"])
        self.holder = holder
        let ours = Self.mountNamespace(of: getpid())
        guard waitUntil(safetyNet: 10, { Self.mountNamespace(of: holder).map { $0 != ours } ?? false }) else {
            Glibc.kill(holder, SIGKILL)
            _ = waitForExit(holder, timeout: 5)
            throw XCTSkip("unshare --mount did not make a mount namespace here")
        }
        let (code, _, err) = try runToCompletion("/usr/bin/nsenter",
            ["-t", String(holder), "-m", "--", "/bin/mount", "-t", "tmpfs", "-o", "size=256m,mode=0755", "tmpfs", "/run"])
        guard code == 0 else {
            Glibc.kill(holder, SIGKILL)
            _ = waitForExit(holder, timeout: 5)
            throw XCTSkip("cannot mount a tmpfs on a private /run: \(err)")
        }
        let root = "/proc/\(holder)/root"
        _ = try runToCompletion("/usr/bin/nsenter", ["-t", String(holder), "-m", "--", "/bin/mkdir", "-p",
                                                    "/run/systemd/journald.conf.d"])
        try """
            [Journal]
            Storage=volatile
            ReadKMsg=no
            ForwardToKMsg=no
            ForwardToSyslog=no
            ForwardToWall=no
            RateLimitIntervalSec=\(rateLimitInterval)
            RateLimitBurst=\(rateLimitBurst)

            """.write(toFile: root + "/run/systemd/journald.conf.d/50-test.conf", atomically: false, encoding: .utf8)
        // No arguments: journald's first argument names a journal namespace.
        journald = try spawn("/usr/bin/nsenter", ["-t", String(holder), "-m", "--", "/lib/systemd/systemd-journald"],
                             stderrPath: directory.path + "/journald.stderr",
                             environment: ["SYSTEMD_LOG_TARGET": "console"])
        guard waitUntil(safetyNet: 20, { access(root + "/run/systemd/journal/socket", F_OK) == 0
                                         && access(root + "/run/systemd/journal/stdout", F_OK) == 0 }) else {
            throw HarnessError("journald did not start: \(readText(directory.path + "/journald.stderr"))")
        }
    }

    deinit {
        Glibc.kill(journald, SIGTERM)
        if waitForExit(journald, timeout: 10) == nil {
            Glibc.kill(journald, SIGKILL)
            _ = waitForExit(journald, timeout: 5)
        }
        Glibc.kill(holder, SIGKILL)
        _ = waitForExit(holder, timeout: 5)
    }

    private static func mountNamespace(of pid: pid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 128)
        let count = readlink("/proc/\(pid)/ns/mnt", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Reading

    /// The entries matching `matches` (journalctl's FIELD=value terms), as
    /// JSON objects, oldest first.
    func entries(_ matches: [String]) throws -> [[String: Any]] {
        let (code, out, err) = try runToCompletion("/usr/bin/nsenter",
            ["-t", String(holder), "-m", "--", "/usr/bin/journalctl", "--no-pager", "-o", "json"] + matches)
        guard code == 0 || err.contains("No entries") else { throw HarnessError("journalctl \(matches): \(err)") }
        return out.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    // MARK: - A unit of the test's own

    /// A cgroup named like a service, which journald names the unit of
    /// whatever runs in it.
    final class Unit {
        let name: String
        let path: String

        init() throws {
            guard let hierarchy = Unit.cgroup2Mount() else { throw XCTSkip("no cgroup2 hierarchy is mounted") }
            name = "localauthd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).service"
            path = hierarchy + "/" + name
            guard mkdir(path, 0o755) == 0 else {
                throw XCTSkip("cannot make a cgroup at \(path): \(String(cString: strerror(errno)))")
            }
        }

        deinit {
            // Its processes have exited (rmdir fails while one is left).
            _ = waitUntil(safetyNet: 10) { rmdir(path) == 0 || errno == ENOENT }
        }

        /// journald reads `0::PATH` of /proc/PID/cgroup: the cgroup2 mount.
        static func cgroup2Mount() -> String? {
            for line in readText("/proc/self/mountinfo").split(separator: "\n") {
                let halves = line.components(separatedBy: " - ")
                guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
                let fields = halves[0].split(separator: " ")
                guard fields.count > 4, access(String(fields[4]), W_OK) == 0 else { continue }
                return String(fields[4])
            }
            return nil
        }
    }

    /// Starts `daemon`'s binary with its arguments in the journal's
    /// namespace, inside `unit`, stderr connected to the journal and
    /// JOURNAL_STREAM set (so DaemonLog journals natively, as under
    /// systemd); returns its pid (the same through nsenter and the execs).
    func launch(_ daemon: DaemonProcess, in unit: Unit, environment: [String: String] = [:]) throws -> pid_t {
        let wrapper = try directory.write("launch.sh", """
            #!/bin/sh
            echo $$ > "$1" || exit 97
            shift
            exec /usr/bin/systemd-cat -t localauthd /bin/sh -c \
              'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@"' "$@"

            """)
        return try spawn("/usr/bin/nsenter", ["-t", String(holder), "-m", "--", "/bin/sh", wrapper,
                                             unit.path + "/cgroup.procs", daemon.binary] + daemon.arguments,
                         environment: environment)
    }

    /// Sends one entry at `priority` from inside `unit` (journald reports
    /// what it suppressed of a pool with the unit's first entry of that pool
    /// after the window). Through systemd-cat, which stays a second, so that
    /// journald can still read its cgroup when it takes the entry.
    func send(_ message: String, priority: String, from unit: Unit) throws {
        let script = "echo $$ > \"$1\" || exit 97; exec /usr/bin/systemd-cat -t localauthd-test -p \"$2\" "
            + "/bin/sh -c 'echo \"$0\"; sleep 1' \"$3\""
        let pid = try spawn("/usr/bin/nsenter", ["-t", String(holder), "-m", "--", "/bin/sh", "-c", script, "sh",
                                                unit.path + "/cgroup.procs", priority, message])
        _ = waitForExit(pid, timeout: 20)
    }
}
