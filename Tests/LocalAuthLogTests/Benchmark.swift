// Throwaway benchmark, not a test: runs only with LOCALAUTH_BENCH=1
// (release: swift test -c release -Xswiftc -enable-testing --filter Benchmark).
// Prints durable appends/s at 1/16/64 appenders, the raw fdatasync rate,
// replay records/s of 10M ~64-byte records with and without the chain, and
// open time of that log.

import Dispatch
import Foundation
import Glibc
import Synchronization
import LocalAuthSystem
import XCTest

@testable import LocalAuthLog

final class Benchmark: XCTestCase {
    private func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    func testBenchmark() throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LOCALAUTH_BENCH"] == "1" else { return }
        let records = Int(environment["LOCALAUTH_BENCH_RECORDS"] ?? "") ?? 10_000_000
        let payload = [UInt8](repeating: 0x5A, count: 64)

        // Raw fdatasync after a 128-byte append, one thread.
        do {
            let directory = TemporaryDirectory()
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
            let directory = TemporaryDirectory()
            let log = try EventLog.open(directory.path)
            let perThread = appenders == 1 ? 4000 : 100_000 / appenders * (appenders == 64 ? 2 : 1)
            let syncs = Atomic<Int>(0)
            _ = syncs
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

        let directory = TemporaryDirectory()
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
            XCTAssertEqual(count, records)
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
    }
}
