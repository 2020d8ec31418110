// Small pieces the benchmark modes share: clocks, Unix sockets, line I/O and
// a latency histogram. Plain Glibc, no dependency on the daemon's modules.
import Glibc

func monotonicNanos() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func die(_ message: String) -> Never {
    let line = "localauth-bench: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}

/// A blocking AF_UNIX stream connection; nil with errno on failure.
func connectUnix(_ path: String) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { die("socket path too long: \(path)") }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if result != 0 {
        let saved = errno
        close(fd)
        errno = saved
        return nil
    }
    return fd
}

func connectOrDie(_ path: String) -> Int32 {
    for _ in 0..<200 {
        if let fd = connectUnix(path) { return fd }
        if errno != EAGAIN && errno != ECONNREFUSED && errno != ENOENT { break }
        usleep(5000)
    }
    die("connect \(path): errno \(errno)")
}

func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
}

func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            // send(2) on sockets (MSG_NOSIGNAL), write(2) on the workers' pipes.
            var n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 && errno == ENOTSOCK { n = write(fd, raw.baseAddress! + offset, raw.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&entry, 1, 1000)
                    continue
                }
                die("send: errno \(errno)")
            }
            offset += n
        }
    }
}

func sendLine(_ fd: Int32, _ line: String) { sendAll(fd, Array((line + "\n").utf8)) }

/// Buffered reading of LF-terminated lines from one descriptor.
private let readScratchSize = 65536
nonisolated(unsafe) private let readScratch = UnsafeMutablePointer<UInt8>.allocate(capacity: readScratchSize)

struct LineReader {
    let fd: Int32
    var buffer: [UInt8] = []
    var start = 0
    /// The last `fill` got less than it asked for: the socket is (very likely)
    /// empty, so a poll loop need not call read(2) again just to see EAGAIN.
    var lastReadWasShort = false

    init(fd: Int32) { self.fd = fd }

    /// Appends what one read(2) returns; false at EOF or error (not EAGAIN).
    mutating func fill() -> Bool? {
        if start > 0 && start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
        if start > 65536 { buffer.removeFirst(start); start = 0 }
        // One scratch buffer for the whole (single-threaded) client: a 64 KiB
        // temporary per read would be a malloc and free every time.
        let n = read(fd, readScratch, readScratchSize)
        if n > 0 { buffer.append(contentsOf: UnsafeBufferPointer(start: readScratch, count: n)) }
        lastReadWasShort = n < readScratchSize
        if n > 0 { return true }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        return false
    }

    /// The next complete line (without LF), if buffered.
    mutating func nextLine() -> ArraySlice<UInt8>? {
        guard let end = buffer[start...].firstIndex(of: 10) else { return nil }
        let line = buffer[start..<end]
        start = end + 1
        return line
    }

    /// Blocks until a line arrives.
    mutating func readLine() -> String {
        while true {
            if let line = nextLine() { return String(decoding: line, as: UTF8.self) }
            switch fill() {
            case true?: continue
            case nil: var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0); _ = poll(&entry, 1, 1000)
            case false?: die("connection closed by the daemon")
            }
        }
    }
}

/// Latency histogram: 1 µs buckets up to 10 ms, then 100 µs buckets up to 10 s.
struct Histogram {
    static let fine = 10_000
    static let size = fine + 100_000
    var counts = [UInt64](repeating: 0, count: Histogram.size)
    var total: UInt64 = 0

    mutating func record(nanos: UInt64) {
        let micros = Int(nanos / 1000)
        let bucket = micros < Histogram.fine ? micros : min(Histogram.size - 1, Histogram.fine + (micros - Histogram.fine) / 100)
        counts[bucket] += 1
        total += 1
    }

    static func micros(ofBucket bucket: Int) -> Double {
        bucket < fine ? Double(bucket) + 0.5 : Double(fine + (bucket - fine) * 100 + 50)
    }

    func percentile(_ p: Double) -> Double {
        guard total > 0 else { return 0 }
        let rank = UInt64((Double(total) * p).rounded(.up))
        var seen: UInt64 = 0
        for (bucket, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank { return Histogram.micros(ofBucket: bucket) }
        }
        return 0
    }

    mutating func merge(_ other: Histogram) {
        for index in 0..<counts.count where other.counts[index] > 0 { counts[index] += other.counts[index] }
        total += other.total
    }

    /// "H bucket:count bucket:count ..." for the non-empty buckets.
    var serialized: String {
        var parts = ["H"]
        for (bucket, count) in counts.enumerated() where count > 0 { parts.append("\(bucket):\(count)") }
        return parts.joined(separator: " ")
    }

    init() {}

    init?(serialized line: String) {
        let parts = line.split(separator: " ")
        guard parts.first == "H" else { return nil }
        for part in parts.dropFirst() {
            let pair = part.split(separator: ":")
            guard pair.count == 2, let bucket = Int(pair[0]), let count = UInt64(pair[1]), bucket < Histogram.size else { return nil }
            counts[bucket] += count
            total += count
        }
    }
}

func raiseFileLimit(_ wanted: Int) {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_max < rlim_t(wanted) && getuid() == 0 { limit.rlim_max = rlim_t(wanted) }
    limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Reads one line from stdin (the parent's commands), nil at EOF.
func readStdinLine() -> String? {
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        let n = read(0, &byte, 1)
        if n == 1 {
            if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        } else if n < 0 && errno == EINTR {
            continue
        } else {
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }
}

/// The value of `key=` in a reply line.
func field(_ key: String, in line: String) -> String? {
    for word in line.split(separator: " ") where word.hasPrefix(key + "=") {
        return String(word.dropFirst(key.count + 1))
    }
    return nil
}
