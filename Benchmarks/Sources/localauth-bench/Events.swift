// Figure 2: durable security events. One process, one poll(2) loop (like
// redis-benchmark). For each user i the parent opens an admin connection as
// root (the daemon takes identity from SO_PEERCRED at connect time), enrolls
// uid BASE+i and sets its passcode, then forks a child that becomes that uid,
// connects the user connection and hands the connected descriptor back over a
// socketpair (SCM_RIGHTS) before exiting; the credentials the daemon captured
// at connect stay those of uid BASE+i. The user connection creates a context
// and starts `evaluate policy=biometrics`. Each round trip: the user's admin
// connection sends `sensor result=nomatch`; the daemon appends
// biometric-failed, and only after its fdatasync sends the next PROMPT to the
// user (S-40). Counted: nomatch -> PROMPT round trips.
import Glibc

// MARK: - Passing a descriptor (SCM_RIGHTS) without the CMSG macros

/// On x86_64/arm64 Linux, cmsghdr is 16 bytes (size_t len, int level, int
/// type) and its data follows it: CMSG_LEN(sizeof(int)) = 16 + 4,
/// CMSG_SPACE(sizeof(int)) = 16 + 8.
private let cmsgHeaderSize = MemoryLayout<cmsghdr>.size
private let cmsgLenOneFD = cmsgHeaderSize + MemoryLayout<Int32>.size
private let cmsgSpaceOneFD = cmsgHeaderSize + 8

private func sendFD(over channel: Int32, _ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    let control = UnsafeMutableRawPointer.allocate(byteCount: cmsgSpaceOneFD, alignment: 8)
    defer { control.deallocate() }
    control.initializeMemory(as: UInt8.self, repeating: 0, count: cmsgSpaceOneFD)
    let header = control.bindMemory(to: cmsghdr.self, capacity: 1)
    header.pointee.cmsg_len = numericCast(cmsgLenOneFD)
    header.pointee.cmsg_level = SOL_SOCKET
    header.pointee.cmsg_type = Int32(SCM_RIGHTS)
    control.storeBytes(of: fd, toByteOffset: cmsgHeaderSize, as: Int32.self)
    return withUnsafeMutablePointer(to: &byte) { bytePointer in
        var vector = iovec(iov_base: UnsafeMutableRawPointer(bytePointer), iov_len: 1)
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            var message = msghdr()
            message.msg_iov = vectorPointer
            message.msg_iovlen = 1
            message.msg_control = control
            message.msg_controllen = numericCast(cmsgSpaceOneFD)
            while true {
                let n = sendmsg(channel, &message, Int32(MSG_NOSIGNAL))
                if n == 1 { return true }
                if n < 0 && errno == EINTR { continue }
                return false
            }
        }
    }
}

private func receiveFD(from channel: Int32) -> Int32? {
    var byte: UInt8 = 0
    let control = UnsafeMutableRawPointer.allocate(byteCount: cmsgSpaceOneFD, alignment: 8)
    defer { control.deallocate() }
    control.initializeMemory(as: UInt8.self, repeating: 0, count: cmsgSpaceOneFD)
    let received: Int = withUnsafeMutablePointer(to: &byte) { bytePointer in
        var vector = iovec(iov_base: UnsafeMutableRawPointer(bytePointer), iov_len: 1)
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            var message = msghdr()
            message.msg_iov = vectorPointer
            message.msg_iovlen = 1
            message.msg_control = control
            message.msg_controllen = numericCast(cmsgSpaceOneFD)
            while true {
                let n = recvmsg(channel, &message, Int32(MSG_CMSG_CLOEXEC))
                if n < 0 && errno == EINTR { continue }
                if n != 1 || message.msg_controllen < numericCast(cmsgLenOneFD) { return -1 }
                return 1
            }
        }
    }
    guard received == 1 else { return nil }
    let header = control.bindMemory(to: cmsghdr.self, capacity: 1).pointee
    guard header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS),
          Int(header.cmsg_len) >= cmsgLenOneFD else { return nil }
    return control.load(fromByteOffset: cmsgHeaderSize, as: Int32.self)
}

/// Connects to `socketPath` as `uid`: a forked child switches to the uid,
/// connects, and passes the connected socket back; the daemon's SO_PEERCRED
/// was captured at connect, so it names `uid`.
func connectAs(uid: UInt32, _ socketPath: String) -> Int32 {
    var pair: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
        die("socketpair: errno \(errno)")
    }
    let pid = fork()
    if pid < 0 { die("fork: errno \(errno)") }
    if pid == 0 {
        close(pair[0])
        // setresgid/setresuid are not imported (_GNU_SOURCE); as root,
        // setgid/setuid set the real, effective and saved ids alike.
        guard setgroups(0, nil) == 0, setgid(uid) == 0, setuid(uid) == 0, geteuid() == uid else {
            die("cannot become uid \(uid): errno \(errno)")
        }
        let fd = connectOrDie(socketPath)
        _exit(sendFD(over: pair[1], fd) ? 0 : 1)
    }
    close(pair[1])
    let fd = receiveFD(from: pair[0])
    close(pair[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    guard let fd else { die("no descriptor from the child for uid \(uid) (status \(status))") }
    return fd
}

// MARK: - The loop

private enum Phase {
    case running     // a nomatch is out: waiting for the user's answer and the admin's ack
    case resetting   // the evaluation ended: waiting for `a OK` to the reset
    case starting    // evaluate sent: waiting for the first PROMPT
    case done
}

private struct EventUser {
    let uid: UInt32
    let user: Int32
    let admin: Int32
    var userReader: LineReader
    var adminReader: LineReader
    let evaluateLine: [UInt8]
    let nomatch: [UInt8]
    let resetLine: [UInt8]
    var phase = Phase.starting
    var sentAt: UInt64 = 0
    var answer: String? = nil
    var answeredAt: UInt64 = 0
    var acked = false
}

private func hasPrefix(_ line: ArraySlice<UInt8>, _ prefix: StaticString) -> Bool {
    let count = prefix.utf8CodeUnitCount
    guard line.count >= count else { return false }
    let bytes = prefix.utf8Start
    var index = line.startIndex
    for offset in 0..<count {
        if line[index] != bytes[offset] { return false }
        index += 1
    }
    return true
}

func eventsMain(_ arguments: [String]) {
    guard arguments.count >= 4, let users = Int(arguments[1]), let seconds = Double(arguments[2]),
          let baseUID = Int(arguments[3]) else {
        die("usage: events SOCKET USERS SECONDS BASE_UID")
    }
    let socketPath = arguments[0]
    raiseFileLimit(2 * users + 64)
    var states: [EventUser] = []
    for index in 0..<users {
        let uid = UInt32(baseUID + index)
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
        let user = connectAs(uid: uid, socketPath)
        var userReader = LineReader(fd: user)
        sendLine(user, "n new")
        let created = userReader.readLine()
        guard created.hasPrefix("n OK"), let ctx = field("ctx", in: created) else { die("new: \(created)") }
        let evaluateLine = Array("e evaluate ctx=\(ctx) policy=biometrics reason=bench\n".utf8)
        sendAll(user, evaluateLine)
        let prompt = userReader.readLine()
        guard prompt.hasPrefix("e PROMPT") else { die("evaluate: \(prompt)") }
        setNonBlocking(user)
        setNonBlocking(admin)
        states.append(EventUser(uid: uid, user: user, admin: admin, userReader: userReader, adminReader: adminReader,
                                evaluateLine: evaluateLine,
                                nomatch: Array("s sensor uid=\(uid) result=nomatch\n".utf8),
                                resetLine: Array("a reset uid=\(uid)\n".utf8)))
    }
    // fds[i] is user i's connection, fds[users + i] its admin connection.
    var fds = states.map { pollfd(fd: $0.user, events: Int16(POLLIN), revents: 0) }
        + states.map { pollfd(fd: $0.admin, events: Int16(POLLIN), revents: 0) }
    let start = monotonicNanos()
    let measureFrom = start + 500_000_000
    let end = measureFrom + UInt64(seconds * 1e9)
    var histogram = Histogram()
    var count = 0
    var restarts = 0
    var active = users

    /// Sends the next nomatch, or retires the user once the time is up.
    func next(_ index: Int, _ now: UInt64) {
        if now >= end {
            states[index].phase = .done
            fds[index].fd = -1
            fds[users + index].fd = -1
            active -= 1
            return
        }
        states[index].phase = .running
        states[index].answer = nil
        states[index].acked = false
        states[index].sentAt = now
        sendAll(states[index].admin, states[index].nomatch)
    }

    /// A nomatch round trip is complete once both the answer and the ack are in.
    func complete(_ index: Int, _ now: UInt64) {
        guard states[index].phase == .running, states[index].acked, let answer = states[index].answer else { return }
        if answer.hasPrefix("e PROMPT") {
            if states[index].sentAt >= measureFrom {
                count += 1
                histogram.record(nanos: states[index].answeredAt - states[index].sentAt)
            }
            next(index, now)
        } else {
            // The evaluation ended (AttemptsPerEvaluation, at most 1000) or the
            // user locked out (LockoutThreshold): reset and start again.
            restarts += 1
            states[index].phase = .resetting
            sendAll(states[index].admin, states[index].resetLine)
        }
    }

    for index in states.indices { next(index, monotonicNanos()) }
    while active > 0 {
        let ready = poll(&fds, nfds_t(fds.count), 1000)
        if ready < 0 { if errno == EINTR { continue }; die("poll: errno \(errno)") }
        let now = monotonicNanos()
        for slot in fds.indices where fds[slot].revents != 0 {
            fds[slot].revents = 0
            let index = slot % users
            if slot < users {
                // One read per readiness (poll is level-triggered), like the daemon.
                while true {
                    guard let more = states[index].userReader.fill() else { break }
                    if !more { die("the daemon closed uid \(states[index].uid)'s user connection") }
                    if states[index].userReader.lastReadWasShort { break }
                }
                while let line = states[index].userReader.nextLine() {
                    switch states[index].phase {
                    case .running where states[index].answer == nil:
                        states[index].answer = String(decoding: line, as: UTF8.self)
                        states[index].answeredAt = now
                        complete(index, now)
                    case .starting where hasPrefix(line, "e PROMPT"):
                        next(index, now)
                    default:
                        die("user \(states[index].uid): unexpected \(String(decoding: line, as: UTF8.self))")
                    }
                }
            } else {
                while true {
                    guard let more = states[index].adminReader.fill() else { break }
                    if !more { die("the daemon closed uid \(states[index].uid)'s admin connection") }
                    if states[index].adminReader.lastReadWasShort { break }
                }
                while let line = states[index].adminReader.nextLine() {
                    switch states[index].phase {
                    case .running where !states[index].acked && hasPrefix(line, "s OK"):
                        states[index].acked = true
                        complete(index, now)
                    case .resetting where hasPrefix(line, "a OK"):
                        states[index].phase = .starting
                        sendAll(states[index].user, states[index].evaluateLine)
                    default:
                        die("admin for \(states[index].uid): unexpected \(String(decoding: line, as: UTF8.self))")
                    }
                }
            }
        }
    }
    for state in states { close(state.user); close(state.admin) }
    let rate = Double(count) / (Double(end - measureFrom) / 1e9)
    say("RESULT rps=\(Int(rate)) p50_us=\(histogram.percentile(0.5)) p99_us=\(histogram.percentile(0.99)) restarts=\(restarts) n=\(count)")
}
