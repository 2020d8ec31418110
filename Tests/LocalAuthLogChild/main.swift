// localauthlog-child: the writer processes the log's crash tests kill with
// SIGKILL (CrashTests, OnDemandSyncTests). A program of its own, so that the
// test suite holds no test method that does nothing unless an environment
// variable is set. The parent starts it, reads the seqs it prints and kills
// it at a seeded moment; nothing here checks anything.
//
//   localauthlog-child durable DIR
//       four threads append and wait for durability; the onDurable hook
//       prints "D <seq>" for every seq reported durable.
//   localauthlog-child written DIR PREALLOCATION
//       one thread appends with SyncPolicy.onDemand, never asks for
//       durability, and prints "W <seq>" after each write() returned.
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthLog

/// One line to stdout at once (write(2), no buffering: the parent may kill us any time).
func report(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// Records of every key combination and payloads of varied length.
func keys(_ index: Int) -> RecordKeys {
    switch index % 3 {
    case 0: RecordKeys(type: UInt16(index % 65_536))
    case 1: RecordKeys(type: 7, uid: UInt32(1000 + index % 3))
    default: RecordKeys(type: 9, uid: UInt32.max, context: ContextID(high: 1, low: UInt64(index % 8)))
    }
}

func payload(_ index: Int) -> [UInt8] {
    (0..<(index % 5 == 0 ? 0 : 8 + index % 23)).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
}

func durable(_ directory: String) throws {
    let log = try EventLog.open(directory, options: .init(segmentSize: 32 << 10, onDurable: { seq in report("D \(seq)") }))
    onThreads(4) { thread in
        for index in 0..<20_000 {
            guard let seq = try? log.append(time: Int64(index), keys: keys(index + thread), payload: payload(index)),
                  (try? log.waitDurable(seq)) != nil
            else { return }
        }
    }
    try log.close()
}

func written(_ directory: String, preallocation: Int) throws {
    let log = try EventLog.open(
        directory, options: .init(segmentSize: 16 << 10, syncPolicy: .onDemand, preallocation: preallocation))
    for index in 1...2_000_000 {
        let seq = try log.append(time: 1_764_000_000_000_000 + Int64(index) * 1_000, keys: keys(index), payload: payload(index))
        if index % 3 == 0 {
            try log.write()
            report("W \(seq)")
        }
    }
}

let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "durable" {
    try durable(arguments[2])
} else if arguments.count == 4, arguments[1] == "written", let preallocation = Int(arguments[3]) {
    try written(arguments[2], preallocation: preallocation)
} else {
    FileHandle.standardError.write(Data("usage: localauthlog-child durable DIR | written DIR PREALLOCATION\n".utf8))
    exit(2)
}
