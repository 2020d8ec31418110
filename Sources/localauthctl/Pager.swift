// journalctl's habit: when stdout is a terminal, long output goes through a
// pager ($LOCALAUTHCTL_PAGER, $SYSTEMD_PAGER or $PAGER, else less with
// -FRSXK so short output prints and exits at once). `--no-pager`, `cat`, or
// no pager installed, prints directly. Safe under sudo: see `secureMode`.

import Glibc

final class Pager {
    private let pipe: UnsafeMutablePointer<FILE>

    private init(pipe: UnsafeMutablePointer<FILE>) { self.pipe = pipe }

    static func start() -> Pager? {
        guard Console.stdoutIsTerminal else { return nil }
        // As systemd's pager (SYSTEMD_PAGERSECURE): as root, or under sudo,
        // $PAGER is not trusted (it may be the invoking user's) and less runs
        // with LESSSECURE=1, which disables its shell escapes and file
        // commands. SYSTEMD_PAGERSECURE=0 opts out; =1 opts in for anyone.
        let secure = Self.secureMode(uid: getuid(), environment: { getenv($0).map { String(cString: $0) } })
        var command = getenv("LOCALAUTHCTL_PAGER").map { String(cString: $0) }
            ?? getenv("SYSTEMD_PAGER").map { String(cString: $0) } ?? getenv("PAGER").map { String(cString: $0) } ?? ""
        if secure {
            command = ""
            setenv("LESSSECURE", "1", 1)
        }
        if command.isEmpty {
            guard access("/usr/bin/less", X_OK) == 0 || access("/bin/less", X_OK) == 0 else { return nil }
            command = "less"
            setenv("LESS", "FRSXK", 0)
        }
        if command == "cat" { return nil }
        Console.flush()
        guard let pipe = popen(command, "w") else { return nil }
        dup2(fileno(pipe), 1)
        return Pager(pipe: pipe)
    }

    /// Whether the pager must be locked down: SYSTEMD_PAGERSECURE when set
    /// (a boolean), else when running as root or under sudo.
    static func secureMode(uid: uid_t, environment: (String) -> String?) -> Bool {
        if let value = environment("SYSTEMD_PAGERSECURE") {
            switch value.lowercased() {
            case "1", "yes", "y", "true", "t", "on": return true
            case "0", "no", "n", "false", "f", "off": return false
            default: break
            }
        }
        return uid == 0 || environment("SUDO_UID") != nil
    }

    /// Flushes, closes our end and waits for the pager to exit.
    func finish() {
        Console.flush()
        close(1)
        pclose(pipe)
    }
}
