// Helpers shared by the log tests: records with predictable contents, byte
// surgery on segment files, and the child writer the crash tests kill (the
// temporary directories are LocalAuthTestSupport's).

import Foundation
import Glibc
import LocalAuthCore
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

@testable import LocalAuthLog

enum Fixture {
    static let contextA = ContextID(high: 0x8c1f_0a6e_2b7d_4e59, low: 0xa0c3_f1d2_e4b5_a697)
    static let contextB = ContextID(high: 1, low: 2)

    /// Keys cycling through every combination (none, uid, context, both).
    static func keys(_ index: Int) -> RecordKeys {
        switch index % 4 {
        case 0: RecordKeys(type: UInt16(index % 65_536))
        case 1: RecordKeys(type: 7, uid: UInt32(1000 + index % 3))
        case 2: RecordKeys(type: 9, context: index % 8 == 2 ? contextA : contextB)
        default: RecordKeys(type: UInt16.max, uid: UInt32.max, context: contextA)
        }
    }

    static func payload(_ index: Int) -> [UInt8] {
        (0..<(index % 5 == 0 ? 0 : 8 + index % 23)).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
    }

    static func time(_ index: Int) -> Int64 { 1_764_000_000_000_000 + Int64(index) * 1_000 - (index % 7 == 0 ? Int64.max / 2 : 0) }
}

extension XCTestCase {
    /// A log with `count` records (Fixture keys/payloads), closed.
    @discardableResult
    func makeLog(_ directory: TemporaryDirectory, count: Int, segmentSize: Int = 64 << 20) throws -> [LogPosition] {
        let log = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize))
        for index in 1...count {
            try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
        }
        try log.waitDurable(UInt64(count))
        try log.close()
        return try positions(directory)
    }

    /// Every record's position, read back without chain checks.
    func positions(_ directory: TemporaryDirectory) throws -> [LogPosition] {
        let reader = try LogReader(logDirectory: directory.log)
        var result: [LogPosition] = []
        while case .record(let record) = reader.next() { result.append(record.position) }
        return result
    }

    func segmentPath(_ directory: TemporaryDirectory, _ segment: UInt64) -> String {
        directory.log + "/" + SegmentName.fileName(segment)
    }

    func readFile(_ path: String) throws -> [UInt8] {
        let fd = try FileDescriptor.open(path, .readOnly)
        defer { try? fd.close() }
        let size = Int(try fd.size())
        return try [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            initialized = 0
            while initialized < size {
                let n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[initialized...]))
                if n == 0 { break }
                initialized += n
            }
        }
    }

    func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        let fd = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: 0o640)
        defer { try? fd.close() }
        try fd.writeAll(bytes)
    }

    func flipBit(_ path: String, at offset: Int, bit: Int = 0) throws {
        var bytes = try readFile(path)
        bytes[offset] ^= UInt8(1 << bit)
        try writeFile(path, bytes)
    }

    func truncateFile(_ path: String, to size: Int) throws {
        XCTAssertEqual(truncate(path, off_t(size)), 0)
    }

    /// Reads every record with full chain checks; returns seqs and the final step.
    func readAll(_ directory: TemporaryDirectory) throws -> (seqs: [UInt64], last: ReadStep) {
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        var seqs: [UInt64] = []
        while true {
            let step = reader.next()
            guard case .record(let record) = step else { return (seqs, step) }
            seqs.append(record.seq)
        }
    }

    func assertRefuses(
        _ directory: TemporaryDirectory, _ reasons: Set<CorruptionReason>, seq: UInt64? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try EventLog.open(directory.path), file: file, line: line) { error in
            guard case LogError.untrustworthy(let corruption) = error else {
                return XCTFail("expected untrustworthy, got \(error)", file: file, line: line)
            }
            XCTAssertTrue(reasons.contains(corruption.reason), "\(corruption)", file: file, line: line)
            if let seq { XCTAssertEqual(corruption.seq, seq, "\(corruption)", file: file, line: line) }
            let message = "\(error)"
            XCTAssertTrue(message.contains("localauthctl verify") && message.contains("localauthctl repair"), file: file, line: line)
        }
    }

    func assertRefuses(
        _ directory: TemporaryDirectory, _ reason: CorruptionReason, seq: UInt64? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try EventLog.open(directory.path), file: file, line: line) { error in
            guard case LogError.untrustworthy(let corruption) = error else {
                return XCTFail("expected untrustworthy, got \(error)", file: file, line: line)
            }
            XCTAssertEqual(corruption.reason, reason, "\(corruption)", file: file, line: line)
            if let seq { XCTAssertEqual(corruption.seq, seq, "\(corruption)", file: file, line: line) }
            let message = "\(error)"
            XCTAssertTrue(message.contains("localauthctl verify") && message.contains("localauthctl repair"), file: file, line: line)
        }
    }
}

/// Runs `localauthlog-child ARGUMENTS` (Tests/LocalAuthLogChild), reads its
/// "`prefix`<seq>" lines until `target` of them arrived (or it ended), kills
/// it with SIGKILL, reads what it had printed by then, and returns the
/// largest seq reported and how many lines.
func runChildUntilKilled(_ arguments: [String], prefix: String, lines target: Int) throws -> (maxSeq: UInt64, seen: Int) {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: try Binary.find("localauthlog-child"))
    child.arguments = arguments
    let pipe = Pipe()
    child.standardOutput = pipe
    child.standardError = FileHandle.nullDevice
    try child.run()
    var buffer = ""
    var seen = 0
    var maxSeq: UInt64 = 0
    func consume(_ data: Data) {
        buffer += String(decoding: data, as: UTF8.self)
        while let newline = buffer.firstIndex(of: "\n") {
            let line = buffer[..<newline]
            if line.hasPrefix(prefix), let seq = UInt64(line.dropFirst(prefix.count)) {
                maxSeq = max(maxSeq, seq)
                seen += 1
            }
            buffer.removeSubrange(...newline)
        }
    }
    while seen < target {
        let data = pipe.fileHandleForReading.availableData
        if data.isEmpty { break }
        consume(data)
    }
    kill(child.processIdentifier, SIGKILL)
    child.waitUntilExit()
    consume(pipe.fileHandleForReading.readDataToEndOfFile())
    return (maxSeq, seen)
}
