// localauthlog-bench: the event log's own figures (docs/perf-notes), run by
// hand in release, never by the test suite:
//
//   swift build -c release --product localauthlog-bench
//   .build/release/localauthlog-bench                 all figures (10M records)
//   LOCALAUTH_BENCH_RECORDS=N ...                      another record count
//   LOCALAUTH_BENCH_OPEN_ONLY=1 [LOCALAUTH_BENCH_DIR=D] only the open/replay (startup)
//       figures, on a log kept in D (generated once when it is missing)
//
// Prints durable appends/s at 1/16/64 appenders, the raw fdatasync rate,
// replay records/s of 10M ~64-byte records with and without the chain, and
// open time of that log. It was a test method that returned early unless
// LOCALAUTH_BENCH=1; a program of its own cannot pass by doing nothing.
import Dispatch
import Foundation
import Glibc
import LocalAuthLog
import LocalAuthSystem

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// A directory under /tmp, removed at exit of its scope.
final class BenchDirectory {
    let path: String
    init() {
        var template = Array("/tmp/localauthlog-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed") }
        path = String(cString: made)
    }
    var log: String { path + "/log" }
    deinit { _ = try? FileManager.default.removeItem(atPath: path) }
}

func check(_ condition: Bool, _ what: String) {
    if !condition {
        FileHandle.standardError.write(Data("localauthlog-bench: \(what)\n".utf8))
        exit(1)
    }
}

func allFigures(records: Int, payload: [UInt8]) throws {
    // Raw fdatasync after a 128-byte append, one thread.
    do {
        let directory = BenchDirectory()
        let fd = try FileDescriptor.open(directory.path + "/raw", .writeOnly, options: [.create])
        let bytes = [UInt8](repeating: 1, count: 128)
        let start = now()
        for index in 0..<2000 {
            try fd.writeAll(bytes, at: Int64(index * 128))
            try fd.fdatasync()
        }
        print(String(format: "BENCH raw fdatasync, 1 thread: %.0f syncs/s", 2000 / (now() - start)))
        try fd.close()
    }

    for appenders in [1, 16, 64] {
        let directory = BenchDirectory()
        let log = try EventLog.open(directory.path)
        let perThread = appenders == 1 ? 4000 : 100_000 / appenders * (appenders == 64 ? 2 : 1)
        let start = now()
        onThreads(appenders) { thread in
            for index in 0..<perThread {
                let seq = try! log.append(time: Int64(index), keys: RecordKeys(type: 1, uid: UInt32(thread)), payload: payload)
                try! log.waitDurable(seq)
            }
        }
        let elapsed = now() - start
        try log.close()
        print(String(format: "BENCH durable appends, %d appenders: %.0f appends/s (%d appends)", appenders,
                     Double(appenders * perThread) / elapsed, appenders * perThread))
    }

    let directory = BenchDirectory()
    do {
        let log = try EventLog.open(directory.path)
        let start = now()
        for index in 0..<records {
            try log.append(time: Int64(index), keys: RecordKeys(type: 3, uid: UInt32(index % 100)), payload: payload)
        }
        let appended = now() - start
        try log.waitDurable(UInt64(records))
        try log.close()
        print(String(format: "BENCH append %d records (no waiting): %.0f appends/s; durable after %.1f s", records,
                     Double(records) / appended, now() - start))
    }
    for chain in [ChainCheck.none, .full] {
        let reader = try LogReader(logDirectory: directory.log, chain: chain)
        let start = now()
        var count = 0
        var sum = 0
        while case .record(let record) = reader.next() {
            count += 1
            sum &+= record.payload.count
        }
        let elapsed = now() - start
        check(count == records, "replay read \(count) of \(records) records")
        print(String(format: "BENCH replay %d records, chain %@: %.2f s, %.0f records/s", count, "\(chain)", elapsed, Double(count) / elapsed))
        _ = sum
    }
    for chain in [ChainCheck.full, .lastSegment] {
        let start = now()
        let log = try EventLog.open(directory.path, options: .init(chainCheck: chain))
        let elapsed = now() - start
        try log.close()
        print(String(format: "BENCH open with %d records, chain %@: %.2f s", records, "\(chain)", elapsed))
    }
    let start = now()
    let report = try EventLog.verify(directory.path)
    print(String(format: "BENCH verify %d records: %.2f s (%@)", records, now() - start, report.isOK ? "OK" : "FAILED"))
    try startupFigures(records: records, payload: payload, directory: directory.path)
}

/// The daemon's start: open (full check and index, as before seals, vs the
/// sealed open), then the newest valid snapshot and a scan of the tail
/// after it (what `Replay.fold` reads), or of the whole log without one.
func startupFigures(records: Int, payload: [UInt8], directory given: String?) throws {
    let temporary = given == nil ? BenchDirectory() : nil
    let path = given ?? temporary!.path
    if !File.exists(path + "/log") {
        try Directory.create(path, mode: 0o750)
        let log = try EventLog.open(path)
        let start = now()
        for index in 0..<records {
            try log.append(time: Int64(index), keys: RecordKeys(type: 3, uid: UInt32(index % 100)), payload: payload)
        }
        try log.waitDurable(UInt64(records))
        try log.close()
        print(String(format: "BENCH generated %d records in %.1f s", records, now() - start))
    }
    let store = SnapshotStore(directory: path)
    for seq in try store.list() { try File.unlink(store.path(seq)) }
    let modes: [(String, EventLog.Options)] = [
        ("before: records+full chain+index", .init(chainCheck: .full)),
        ("after: sealed", .init(verification: .sealed)),
    ]
    func startup(_ options: EventLog.Options, snapshot: Bool) throws -> (open: Double, total: Double, tail: Int) {
        let start = now()
        let log = try EventLog.open(path, options: options)
        let opened = now() - start
        var from: UInt64 = 1
        if snapshot {
            let (found, _) = log.newestValidSnapshot()
            from = (found?.seq ?? 0) + 1
            check(found != nil, "no snapshot found")
        }
        let reader = try log.reader(from: from)
        var tail = 0
        while case .record = reader.next() { tail += 1 }
        let total = now() - start
        try log.close()
        return (opened, total, tail)
    }
    // Warm the page cache once (the figures are warm-cache figures).
    _ = try startup(.init(chainCheck: .none), snapshot: false)
    for snapshot in [false, true] {
        if snapshot {
            let log = try EventLog.open(path, options: .init(verification: .sealed))
            let seq = log.lastSeq - 1000
            _ = try store.write(seq: seq, chainHead: try log.chainHead(at: seq), time: 0, payload: [1])
            try log.close()
        }
        for (name, options) in modes {
            var runs: [(open: Double, total: Double, tail: Int)] = []
            for _ in 0..<3 { runs.append(try startup(options, snapshot: snapshot)) }
            let best = runs.min { $0.total < $1.total }!
            print(String(format: "BENCH startup %@ snapshot, %@: open %.3f s, open+snapshot+tail scan %.3f s (%d records after the snapshot), runs %@",
                         snapshot ? "with" : "without", name, best.open, best.total, best.tail,
                         runs.map { String(format: "%.3f", $0.total) }.joined(separator: "/")))
        }
    }
    // First start after upgrading a log written before seals: a full scan that writes the seals.
    // Seals are "<segment>.seg.seal" (FORMAT.md "Seals").
    for name in try Directory.entries(path + "/log") where name.hasSuffix(".seg.seal") { try? File.unlink(path + "/log/" + name) }
    var start = now()
    var log = try EventLog.open(path, options: .init(verification: .sealed))
    print(String(format: "BENCH sealed open of an unsealed log (writes %d seals): %.3f s", log.recovery.sealsWritten, now() - start))
    try log.close()
    start = now()
    log = try EventLog.open(path, options: .init(verification: .sealed))
    print(String(format: "BENCH sealed open after that: %.3f s (%d segments by seal)", now() - start, log.recovery.sealedSegmentsTrusted))
    start = now()
    _ = log.positions(uid: 7)
    print(String(format: "BENCH first history query after a sealed open (builds the index): %.3f s", now() - start))
    try log.close()
    for seq in try store.list() { try File.unlink(store.path(seq)) }
}

let environment = ProcessInfo.processInfo.environment
let records = Int(environment["LOCALAUTH_BENCH_RECORDS"] ?? "") ?? 10_000_000
let payload = [UInt8](repeating: 0x5A, count: 64)
if environment["LOCALAUTH_BENCH_OPEN_ONLY"] == "1" {
    try startupFigures(records: records, payload: payload, directory: environment["LOCALAUTH_BENCH_DIR"])
} else {
    try allFigures(records: records, payload: payload)
}
