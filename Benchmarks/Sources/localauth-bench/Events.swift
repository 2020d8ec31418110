// Figure 2: durable security events. One worker process per user: it opens
// an admin connection as root (the daemon takes identity from SO_PEERCRED at
// connect time), enrolls its uid, then drops to that uid and opens the user
// connection, creates a context and starts `evaluate policy=biometrics`.
// Each round trip: the admin connection sends `sensor result=nomatch`; the
// daemon appends biometric-failed, and only after its fdatasync sends the
// next PROMPT to the user (S-40). Counted: nomatch -> PROMPT round trips.
import Glibc

struct Child {
    let pid: pid_t
    let stdinFD: Int32
    var stdout: LineReader
}

func selfPath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { die("readlink /proc/self/exe") }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Starts this program with `arguments`, with pipes on stdin and stdout.
func spawnChild(_ arguments: [String]) -> Child {
    var input: [Int32] = [0, 0]
    var output: [Int32] = [0, 0]
    // Close-on-exec, so that no worker inherits another worker's pipe ends.
    guard pipe(&input) == 0, pipe(&output) == 0 else { die("pipe") }
    for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, input[0], 0)
    posix_spawn_file_actions_adddup2(&actions, output[1], 1)
    posix_spawn_file_actions_addclose(&actions, input[1])
    posix_spawn_file_actions_addclose(&actions, output[0])
    let path = selfPath()
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
    guard result == 0 else { die("posix_spawn: \(result)") }
    posix_spawn_file_actions_destroy(&actions)
    for pointer in argv { free(pointer) }
    close(input[0])
    close(output[1])
    return Child(pid: pid, stdinFD: input[1], stdout: LineReader(fd: output[0]))
}

func eventsMain(_ arguments: [String]) {
    guard arguments.count >= 4, let users = Int(arguments[1]), let seconds = Double(arguments[2]),
          let baseUID = Int(arguments[3]) else {
        die("usage: events SOCKET USERS SECONDS BASE_UID")
    }
    var children = (0..<users).map { spawnChild(["events-worker", arguments[0], String(baseUID + $0)]) }
    for index in children.indices {
        let line = children[index].stdout.readLine()
        guard line == "READY" else { die("worker: \(line)") }
    }
    let start = monotonicNanos() + 100_000_000
    let measureFrom = start + 500_000_000
    let end = measureFrom + UInt64(seconds * 1e9)
    for child in children { sendLine(child.stdinFD, "GO \(start) \(measureFrom) \(end)") }
    var histogram = Histogram()
    var count = 0
    var restarts = 0
    for index in children.indices {
        let done = children[index].stdout.readLine()
        guard done.hasPrefix("DONE"), let n = Int(field("count", in: done) ?? ""),
              let r = Int(field("restarts", in: done) ?? "") else { die("worker: \(done)") }
        count += n
        restarts += r
        guard let h = Histogram(serialized: children[index].stdout.readLine()) else { die("worker histogram") }
        histogram.merge(h)
        close(children[index].stdinFD)
        var status: Int32 = 0
        waitpid(children[index].pid, &status, 0)
    }
    let rate = Double(count) / (Double(end - measureFrom) / 1e9)
    say("RESULT rps=\(Int(rate)) p50_us=\(histogram.percentile(0.5)) p99_us=\(histogram.percentile(0.99)) restarts=\(restarts) n=\(count)")
}

func eventsWorkerMain(_ arguments: [String]) {
    guard arguments.count >= 2, let uid = UInt32(arguments[1]) else { die("usage: events-worker SOCKET UID") }
    let socketPath = arguments[0]
    let admin = connectOrDie(socketPath)
    var adminReader = LineReader(fd: admin)
    sendLine(admin, "a reset uid=\(uid)")
    _ = adminReader.readLine()
    sendLine(admin, "a enroll uid=\(uid)")
    let enrolled = adminReader.readLine()
    guard enrolled.hasPrefix("a OK") else { die("enroll: \(enrolled)") }
    // Biometrics needs a passcode set (LAErrorPasscodeNotSet otherwise).
    sendLine(admin, "a status uid=\(uid)")
    if field("passcode-set", in: adminReader.readLine()) != "true" {
        sendLine(admin, "a set-passcode uid=\(uid) secret=bench-passcode")
        let set = adminReader.readLine()
        guard set.hasPrefix("a OK") else { die("set-passcode: \(set)") }
    }
    guard setgroups(0, nil) == 0, setgid(uid) == 0, setuid(uid) == 0 else {
        die("cannot become uid \(uid): errno \(errno)")
    }
    let user = connectOrDie(socketPath)
    var userReader = LineReader(fd: user)
    sendLine(user, "n new")
    let created = userReader.readLine()
    guard created.hasPrefix("n OK"), let ctx = field("ctx", in: created) else { die("new: \(created)") }
    let evaluateLine = Array("e evaluate ctx=\(ctx) policy=biometrics reason=bench\n".utf8)
    let nomatch = Array("s sensor uid=\(uid) result=nomatch\n".utf8)
    func startEvaluation() {
        sendAll(user, evaluateLine)
        let prompt = userReader.readLine()
        guard prompt.hasPrefix("e PROMPT") else { die("evaluate: \(prompt)") }
    }
    startEvaluation()
    say("READY")
    guard let go = readStdinLine(), go.hasPrefix("GO") else { exit(0) }
    let times = go.split(separator: " ").dropFirst().compactMap { UInt64($0) }
    guard times.count == 3 else { die("bad GO line") }
    while monotonicNanos() < times[0] { usleep(1000) }
    var histogram = Histogram()
    var count = 0
    var restarts = 0
    while true {
        let sent = monotonicNanos()
        if sent >= times[2] { break }
        sendAll(admin, nomatch)
        let answer = userReader.readLine()
        let received = monotonicNanos()
        let ack = adminReader.readLine()
        guard ack.hasPrefix("s OK") else { die("sensor: \(ack)") }
        if answer.hasPrefix("e PROMPT") {
            if sent >= times[1] {
                count += 1
                histogram.record(nanos: received - sent)
            }
        } else {
            // The evaluation ended (AttemptsPerEvaluation, at most 1000) or the
            // user locked out (LockoutThreshold): reset and start again.
            restarts += 1
            sendLine(admin, "a reset uid=\(uid)")
            let reset = adminReader.readLine()
            guard reset.hasPrefix("a OK") else { die("reset: \(reset) after \(answer)") }
            startEvaluation()
        }
    }
    say("DONE count=\(count) restarts=\(restarts)")
    say(histogram.serialized)
    _ = readStdinLine()
}
