// journalctl's habit: when stdout is a terminal, long output goes through a
// pager ($PAGER, else less with -FRSXK so short output prints and exits at
// once). `--no-pager`, or no pager installed, prints directly.

import Glibc

final class Pager {
    private let pipe: UnsafeMutablePointer<FILE>

    private init(pipe: UnsafeMutablePointer<FILE>) { self.pipe = pipe }

    static func start() -> Pager? {
        guard Console.stdoutIsTerminal else { return nil }
        var command = getenv("PAGER").map { String(cString: $0) } ?? ""
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

    /// Flushes, closes our end and waits for the pager to exit.
    func finish() {
        Console.flush()
        close(1)
        pclose(pipe)
    }
}
