// Figure 4: memory per context and connections held. Both modes set up,
// print one line, then hold everything until stdin closes.
import Glibc

/// Opens `connections` connections and creates `perConnection` contexts on
/// each (pipelined), then holds them.
func contextsMain(_ arguments: [String]) {
    guard arguments.count >= 3, let count = Int(arguments[1]), let per = Int(arguments[2]) else {
        die("usage: contexts SOCKET CONNECTIONS PER_CONNECTION")
    }
    raiseFileLimit(count + 100)
    var fds: [Int32] = []
    var created = 0
    var batch: [UInt8] = []
    for index in 0..<per { batch += Array("n\(index) new\n".utf8) }
    for _ in 0..<count {
        let fd = connectOrDie(arguments[0])
        fds.append(fd)
        sendAll(fd, batch)
        var reader = LineReader(fd: fd)
        for _ in 0..<per {
            let line = reader.readLine()
            guard line.contains(" OK ctx=") else { die("new: \(line)") }
            created += 1
        }
    }
    say("CREATED \(created)")
    _ = readStdinLine()
    for fd in fds { close(fd) }
}

/// Opens `count` connections, checks each is served with a ping, holds them.
func holdMain(_ arguments: [String]) {
    guard arguments.count >= 2, let count = Int(arguments[1]) else { die("usage: hold SOCKET COUNT") }
    raiseFileLimit(count + 100)
    var fds: [Int32] = []
    for _ in 0..<count {
        guard let fd = connectUnix(arguments[0]) else { die("connect after \(fds.count): errno \(errno)") }
        fds.append(fd)
    }
    // Ping them all: a refused connection would answer ERR + BYE instead.
    var served = 0
    for fd in fds {
        sendLine(fd, "p ping")
        var reader = LineReader(fd: fd)
        let line = reader.readLine()
        if line.hasPrefix("p OK") { served += 1 }
    }
    say("HELD \(served)")
    _ = readStdinLine()
    for fd in fds { close(fd) }
}

/// Starts the daemon with NOTIFY_SOCKET and prints the time to READY=1.
/// Leaves it running when --keep is the first argument... (not needed): it
/// stops it with SIGTERM and waits.
func startupMain(_ arguments: [String]) {
    guard arguments.count >= 2 else { die("usage: startup NOTIFY_PATH DAEMON [ARGS...]") }
    let notifyPath = arguments[0]
    unlink(notifyPath)
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(notifyPath.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0 else { die("bind \(notifyPath): errno \(errno)") }
    setenv("NOTIFY_SOCKET", notifyPath, 1)
    let argv = arguments.dropFirst().map { strdup($0) } + [nil]
    var pid: pid_t = 0
    let start = monotonicNanos()
    guard posix_spawn(&pid, arguments[1], nil, nil, argv, environ) == 0 else { die("spawn \(arguments[1])") }
    var buffer = [UInt8](repeating: 0, count: 4096)
    var ready: UInt64 = 0
    while ready == 0 {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&entry, 1, 120_000) <= 0 { die("no READY=1 within 120 s") }
        let n = recv(fd, &buffer, buffer.count, 0)
        if n > 0, String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").contains("READY=1") {
            ready = monotonicNanos()
        }
    }
    say("READY seconds=\(Double(ready - start) / 1e9) pid=\(pid)")
    if arguments.count > 0, getenv("BENCH_KEEP") == nil {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
