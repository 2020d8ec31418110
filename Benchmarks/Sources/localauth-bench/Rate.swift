// Figure 1 (and the peer side of figure 2): request round trips. One
// thread, poll(2) over N connections, the same loop for every server; only
// the bytes sent and how a reply ends differ (`Wire`). With depth D a
// connection sends D requests at once and sends the next batch when all D
// replies are in; each request's latency runs from the batch's send to its
// reply (redis-benchmark measures pipelined latency the same way).
import Glibc

/// What a connection speaks. localauthd: each connection makes its own
/// context and sends `can-evaluate`, cycling through `policies` within a
/// batch (two of them: no two checks in a row are identical, so each is a
/// record of its own, not one kind-33 run); the echo limit (Benchmarks/echo.c) gets
/// the same lines without a context; Redis gets RESP `SET` or `XADD`.
enum Wire {
    case localauth(policies: [String])
    case echo
    case respSet
    case respXadd(valueBytes: Int)

    init?(_ name: String) {
        switch name {
        case "localauth": self = .localauth(policies: ["biometrics"])
        case "echo": self = .echo
        case "resp-set": self = .respSet
        case "resp-xadd": self = .respXadd(valueBytes: 150)
        default: return nil
        }
    }

    var isRESP: Bool {
        switch self {
        case .respSet, .respXadd: true
        case .localauth, .echo: false
        }
    }

    /// One request (with its terminator); `ctx` only for localauthd.
    func request(_ index: Int, ctx: String?) -> [UInt8] {
        switch self {
        case .localauth(let policies):
            return Array("r\(index) can-evaluate ctx=\(ctx ?? "") policy=\(policies[index % policies.count])\n".utf8)
        case .echo:
            return Array("r\(index) can-evaluate ctx=00000000000000000000000000000000 policy=biometrics\n".utf8)
        case .respSet:
            // redis-benchmark -t set: a 3-byte value under a 16-byte key.
            return Array("*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000000\r\n$3\r\nxxx\r\n".utf8)
        case .respXadd(let valueBytes):
            let value = String(repeating: "x", count: valueBytes)
            return Array("*5\r\n$4\r\nXADD\r\n$6\r\nevents\r\n$1\r\n*\r\n$4\r\ndata\r\n$\(valueBytes)\r\n\(value)\r\n".utf8)
        }
    }
}

struct RateConnection {
    let fd: Int32
    var reader: LineReader
    var batch: [UInt8] = []
    var outstanding = 0
    var sentAt: UInt64 = 0
    /// RESP: a `$N` header was read, its value line is next (same reply).
    var bulkPending = false
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
             wire: Wire, maxRequests: Int = Int.max) -> (Double, Histogram, Int, Int) {
    let opened: [(fd: Int32, ctx: String?)]
    if case .localauth = wire {
        opened = openContexts(socketPath, count).map { ($0.fd, $0.ctx) }
    } else {
        opened = (0..<count).map { _ in (connectOrDie(socketPath), nil) }
    }
    let resp = wire.isRESP
    var connections: [RateConnection] = opened.map { pair in
        setNonBlocking(pair.fd)
        var connection = RateConnection(fd: pair.fd, reader: LineReader(fd: pair.fd))
        var line: [UInt8] = []
        for index in 0..<depth { line += wire.request(index, ctx: pair.ctx) }
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
                var ok = false
                if resp {
                    // +OK, or $N then the value (XADD's id); -ERR is an error.
                    if connections[index].bulkPending {
                        connections[index].bulkPending = false
                        ok = true
                    } else if line.first == UInt8(ascii: "$"), line.count > 1, line[line.startIndex + 1] != UInt8(ascii: "-") {
                        connections[index].bulkPending = true
                        continue
                    } else {
                        ok = line.first == UInt8(ascii: "+")
                    }
                } else if let space = line.firstIndex(of: 32), line.endIndex > space + 2 {
                    // "rN OK ..." — anything else is an error.
                    ok = line[space + 1] == UInt8(ascii: "O") && line[space + 2] == UInt8(ascii: "K")
                }
                connections[index].outstanding -= 1
                total += 1
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

/// `rate SOCKET CONNECTIONS DEPTH SECONDS [WIRE]`, WIRE one of localauth
/// (the default), echo, resp-set, resp-xadd; or a policy name for localauth.
func rateMain(_ arguments: [String]) {
    guard arguments.count >= 4, let count = Int(arguments[1]), let depth = Int(arguments[2]),
          let seconds = Double(arguments[3]) else {
        die("usage: rate SOCKET CONNECTIONS DEPTH SECONDS [localauth|echo|resp-set|resp-xadd|POLICY]")
    }
    let name = arguments.count > 4 ? arguments[4] : "localauth"
    let wire = Wire(name) ?? .localauth(policies: [name])
    let (rate, histogram, errors, total) = runRate(socketPath: arguments[0], connections: count, depth: depth,
                                                   seconds: seconds, warmup: 0.5, wire: wire)
    // n: replies measured; total: every reply, warm-up included (per-request
    // profiles divide by it).
    say("RESULT rps=\(Int(rate)) p50_us=\(histogram.percentile(0.5)) p99_us=\(histogram.percentile(0.99)) errors=\(errors) n=\(histogram.total) total=\(total)")
}

/// Fills the log with about `events` events: pipelined can-evaluate on 16
/// connections (one policy-checked record each: two policies in turn).
func generateMain(_ arguments: [String]) {
    guard arguments.count >= 2, let events = Int(arguments[1]) else { die("usage: generate SOCKET EVENTS") }
    let start = monotonicNanos()
    let (_, _, errors, total) = runRate(socketPath: arguments[0], connections: 16, depth: 64, seconds: 1e6, warmup: 0,
                                        wire: .localauth(policies: ["biometrics", "owner"]), maxRequests: events)
    say("GENERATED requests=\(total) errors=\(errors) seconds=\(Double(monotonicNanos() - start) / 1e9)")
}
