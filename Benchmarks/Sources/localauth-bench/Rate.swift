// Figure 1: can-evaluate round trips. One thread, poll(2) over N
// connections (like redis-benchmark), each connection its own context. With
// depth D a connection sends D requests at once and sends the next batch when
// all D replies are in; each request's latency runs from the batch's send to
// its reply (redis-benchmark measures pipelined latency the same way).
import Glibc

struct RateConnection {
    let fd: Int32
    var reader: LineReader
    var batch: [UInt8] = []
    var outstanding = 0
    var sentAt: UInt64 = 0
}

/// Opens `count` connections and gives each a context of its own.
func openContexts(_ socketPath: String, _ count: Int) -> [(fd: Int32, ctx: String)] {
    var result: [(Int32, String)] = []
    for _ in 0..<count {
        let fd = connectOrDie(socketPath)
        var reader = LineReader(fd: fd)
        sendLine(fd, "n new")
        let reply = reader.readLine()
        guard reply.hasPrefix("n OK"), let ctx = field("ctx", in: reply) else { die("new: \(reply)") }
        result.append((fd, ctx))
    }
    return result
}

/// Runs the load for `seconds` after `warmup` seconds; returns
/// (requests/s, histogram, errors).
func runRate(socketPath: String, connections count: Int, depth: Int, seconds: Double, warmup: Double,
             policy: String, maxRequests: Int = Int.max) -> (Double, Histogram, Int, Int) {
    let opened = openContexts(socketPath, count)
    var connections: [RateConnection] = opened.map { pair in
        setNonBlocking(pair.fd)
        var connection = RateConnection(fd: pair.fd, reader: LineReader(fd: pair.fd))
        var line: [UInt8] = []
        for index in 0..<depth { line += Array("r\(index) can-evaluate ctx=\(pair.ctx) policy=\(policy)\n".utf8) }
        connection.batch = line
        return connection
    }
    var fds = connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
    var histogram = Histogram()
    var measured = 0
    var errors = 0
    var total = 0
    let start = monotonicNanos()
    let measureFrom = start + UInt64(warmup * 1e9)
    let end = measureFrom + UInt64(seconds * 1e9)
    for index in connections.indices {
        connections[index].sentAt = monotonicNanos()
        connections[index].outstanding = depth
        sendAll(connections[index].fd, connections[index].batch)
    }
    var active = connections.count
    while active > 0 {
        let ready = poll(&fds, nfds_t(fds.count), 1000)
        if ready < 0 { if errno == EINTR { continue }; die("poll: errno \(errno)") }
        let now = monotonicNanos()
        for index in fds.indices where fds[index].revents != 0 {
            fds[index].revents = 0
            // One read per readiness (poll is level-triggered), like redis-benchmark.
            while true {
                guard let more = connections[index].reader.fill() else { break }
                if !more { die("the daemon closed a connection") }
                if connections[index].reader.lastReadWasShort { break }
            }
            while let line = connections[index].reader.nextLine() {
                connections[index].outstanding -= 1
                total += 1
                // "rN OK ..." — anything else is an error.
                var ok = false
                if let space = line.firstIndex(of: 32), line.endIndex > space + 2 {
                    ok = line[space + 1] == UInt8(ascii: "O") && line[space + 2] == UInt8(ascii: "K")
                }
                if !ok {
                    if errors == 0 { say("FIRST-ERROR \(String(decoding: line, as: UTF8.self))") }
                    errors += 1
                }
                if now >= measureFrom && now < end {
                    measured += 1
                    histogram.record(nanos: now - connections[index].sentAt)
                }
            }
            if connections[index].outstanding == 0 {
                if now < end && total < maxRequests {
                    connections[index].sentAt = now
                    connections[index].outstanding = depth
                    sendAll(connections[index].fd, connections[index].batch)
                } else {
                    fds[index].events = 0
                    fds[index].fd = -1
                    active -= 1
                }
            }
        }
    }
    let elapsed = Double(min(monotonicNanos(), end) - measureFrom) / 1e9
    for connection in connections { close(connection.fd) }
    return (Double(measured) / elapsed, histogram, errors, total)
}

func rateMain(_ arguments: [String]) {
    guard arguments.count >= 4, let count = Int(arguments[1]), let depth = Int(arguments[2]),
          let seconds = Double(arguments[3]) else {
        die("usage: rate SOCKET CONNECTIONS DEPTH SECONDS [POLICY]")
    }
    let policy = arguments.count > 4 ? arguments[4] : "biometrics"
    let (rate, histogram, errors, _) = runRate(socketPath: arguments[0], connections: count, depth: depth,
                                               seconds: seconds, warmup: 0.5, policy: policy)
    say("RESULT rps=\(Int(rate)) p50_us=\(histogram.percentile(0.5)) p99_us=\(histogram.percentile(0.99)) errors=\(errors) n=\(histogram.total)")
}

/// Fills the log with about `events` events: pipelined can-evaluate on 16
/// connections (one policy-checked event each).
func generateMain(_ arguments: [String]) {
    guard arguments.count >= 2, let events = Int(arguments[1]) else { die("usage: generate SOCKET EVENTS") }
    let start = monotonicNanos()
    let (_, _, errors, total) = runRate(socketPath: arguments[0], connections: 16, depth: 64, seconds: 1e6, warmup: 0,
                                        policy: "biometrics", maxRequests: events)
    say("GENERATED requests=\(total) errors=\(errors) seconds=\(Double(monotonicNanos() - start) / 1e9)")
}
