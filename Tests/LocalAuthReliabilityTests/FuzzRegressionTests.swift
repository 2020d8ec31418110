// Fuzzing regressions (issue 8 item 2): every input in Tests/Fuzz/regressions
// (crashes found by scripts/fuzz) and in the seed corpora Tests/Fuzz/corpus
// runs through the same checks as the libFuzzer entry points, in process and
// without sanitizers, so that CI keeps them fixed even where libFuzzer is not
// available. The checks mirror Tests/Fuzz/*.swift; internals of the log come
// through @testable import (debug builds are compiled for testing).
import Foundation
import Glibc
import LocalAuthConfig
import LocalAuthCore
@testable import LocalAuthLog
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class FuzzRegressionTests: XCTestCase {
    static let fuzzDirectory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz").path
    }()

    func inputs(_ target: String) -> [(String, [UInt8])] {
        var result: [(String, [UInt8])] = []
        for kind in ["regressions", "corpus"] {
            let directory = Self.fuzzDirectory + "/\(kind)/\(target)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.sorted() { result.append(("\(kind)/\(target)/\(name)", readBytes(directory + "/" + name))) }
        }
        return result
    }

    // MARK: - protocol

    func testProtocolInputs() {
        for (name, bytes) in inputs("protocol") {
            guard bytes.count > 1 else { continue }
            let body = Array(bytes.dropFirst())
            var splitter = LineSplitter(maximumLineLength: 512)
            splitter.append(contentsOf: body)
            while let event = splitter.next() {
                if case .line(let line) = event { checkLine(Array(line), name) }
            }
            checkLine(body, name)
        }
    }

    func checkLine(_ bytes: [UInt8], _ name: String) {
        if case .request(let request) = Request.parse(bytes) {
            var writer = LineWriter()
            writer.append(request)
            var line = writer.bytes
            line.removeLast()
            guard case .request(let again) = Request.parse(line) else { return XCTFail("\(name): re-serialised request does not parse") }
            XCTAssertEqual(again, request, name)
        }
        if let response = try? Response.parse(bytes) {
            var writer = LineWriter()
            writer.append(response)
            var line = writer.bytes
            line.removeLast()
            XCTAssertEqual(try? Response.parse(line), response, name)
        }
    }

    // MARK: - config

    func testConfigInputs() {
        for (name, bytes) in inputs("config") {
            let text = String(decoding: bytes, as: UTF8.self)
            let once = try? ConfigurationParser.parse([(fileName: "fuzz.conf", contents: text)])
            let again = try? ConfigurationParser.parse([(fileName: "fuzz.conf", contents: text)])
            XCTAssertEqual(once, again, name)
        }
    }

    // MARK: - codec (event stream folded, state round trip)

    func testCodecInputs() {
        for (name, bytes) in inputs("codec") {
            guard let mode = bytes.first else { continue }
            if mode & 1 == 1 {
                guard let state = try? StateCodec.decode(Array(bytes.dropFirst())) else { continue }
                checkState(state, name)
                continue
            }
            var state = AuthState()
            var time: Int64 = 1_750_000_000_000_000
            var offset = 1
            while offset + 3 <= bytes.count {
                let kindByte = bytes[offset], step = bytes[offset + 1]
                offset += 2
                if step == 0xFF {
                    guard offset + 8 <= bytes.count else { break }
                    var raw: UInt64 = 0
                    for i in 0..<8 { raw = raw << 8 | UInt64(bytes[offset + i]) }
                    time = Int64(bitPattern: raw)
                    offset += 8
                } else {
                    time = time &+ Int64(step) * 1_000_000
                }
                guard offset < bytes.count else { break }
                let length = Int(bytes[offset])
                offset += 1
                let end = min(offset + length, bytes.count)
                let payload = Array(bytes[offset..<end])
                offset = end
                let code = kindByte < 250 ? UInt16(kindByte % 26) : UInt16(kindByte) << 4
                guard let body = try? EventCodec.decode(kind: code, payload: payload) else { continue }
                XCTAssertEqual(try? EventCodec.decode(kind: code, payload: EventCodec.encode(body)), body, name)
                state.apply(Event(time: time, body))
            }
            checkState(state, name)
        }
    }

    func checkState(_ state: AuthState, _ name: String) {
        for uid in state.users.keys {
            _ = state.status(uid, now: 1_750_000_000_000_000)
            _ = state.passcodeRetryAfter(uid, now: .min)
            _ = state.passcodeRetryAfter(uid, now: .max)
        }
        _ = state.nextPromptDeadline
        let bytes = StateCodec.encode(state)
        do {
            let again = try StateCodec.decode(bytes)
            if again != state {
                XCTFail("\(name): StateCodec round trip changed the state:\n\(describeDifference(state, again))")
            }
        } catch {
            XCTFail("\(name): StateCodec cannot decode what it encoded: \(error)")
        }
    }

    func describeDifference(_ a: AuthState, _ b: AuthState) -> String {
        var lines: [String] = []
        if a.rules != b.rules { lines.append("rules: \(a.rules) vs \(b.rules)") }
        if a.bootID != b.bootID { lines.append("bootID") }
        if a.clockHighWater != b.clockHighWater { lines.append("clockHighWater \(a.clockHighWater) vs \(b.clockHighWater)") }
        if a.eventCount != b.eventCount { lines.append("eventCount") }
        if a.prompting != b.prompting { lines.append("prompting \(a.prompting) vs \(b.prompting)") }
        for uid in Set(a.users.keys).union(b.users.keys) where a.users[uid] != b.users[uid] {
            lines.append("user \(uid): \(String(describing: a.users[uid])) vs \(String(describing: b.users[uid]))")
        }
        for ctx in Set(a.contexts.keys).union(b.contexts.keys) where a.contexts[ctx] != b.contexts[ctx] {
            lines.append("context \(ctx.hex): \(String(describing: a.contexts[ctx])) vs \(String(describing: b.contexts[ctx]))")
        }
        return lines.joined(separator: "\n")
    }

    // MARK: - log (segments, snapshots, truncation)

    func testLogInputs() throws {
        let directory = try TempDirectory()
        mkdir(directory.path + "/log", 0o700)
        mkdir(directory.path + "/snapshots", 0o700)
        for (name, bytes) in inputs("log") {
            guard let mode = bytes.first else { continue }
            for sub in ["/log", "/snapshots"] {
                for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory.path + sub)) ?? [] {
                    unlink(directory.path + sub + "/" + entry)
                }
            }
            let rest = Array(bytes.dropFirst())
            let segment = directory.path + "/log/" + SegmentName.fileName(1)
            switch mode % 4 {
            case 0:
                _ = FileManager.default.createFile(atPath: segment, contents: Data(rest))
                _ = readLog(directory.path, name, expectNoCorruption: false)
            case 1:
                _ = FileManager.default.createFile(atPath: segment, contents: Data(patchedSegment(rest)))
                _ = readLog(directory.path, name, expectNoCorruption: false)
            case 2:
                guard rest.count >= 10 else { continue }
                var seq: UInt64 = 0
                for i in 0..<8 { seq = seq << 8 | UInt64(rest[i]) }
                seq = seq % 1_000_000 + 1
                var file = SnapshotStore.encode(seq: seq, chainHead: .zero, time: 0, payload: Array(rest[9...]))
                let damaged = mode & 0x80 != 0
                if damaged { file[Int(rest[8]) * 7 % file.count] ^= 0x5A }
                let store = SnapshotStore(directory: directory.path)
                _ = FileManager.default.createFile(atPath: store.path(seq), contents: Data(file))
                if case .success(let snapshot) = store.load(seq), let state = try? StateCodec.decode(snapshot.payload) {
                    XCTAssertFalse(damaged, "\(name): a damaged snapshot loaded")
                    checkState(state, name)
                }
            default:
                truncation(directory.path, rest, name)
            }
        }
    }

    func patchedSegment(_ body: [UInt8]) -> [UInt8] {
        var bytes = SegmentHeader(firstSeq: 1, chainBefore: .zero).encoded() + body
        var offset = SegmentHeader.size
        var seq: UInt64 = 1
        while offset + RecordFormat.headerSize <= bytes.count {
            let length = bytes.withUnsafeBytes { Int(RecordFormat.u32($0, offset)) }
            guard length >= RecordFormat.fixedBodySize, offset + 8 + length <= bytes.count else { break }
            bytes.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: seq.littleEndian, toByteOffset: offset + 8, as: UInt64.self)
                let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(offset + 8)..<(offset + 8 + length)]))
                raw.storeBytes(of: crc.littleEndian, toByteOffset: offset + 4, as: UInt32.self)
            }
            offset += 8 + length
            seq += 1
        }
        return bytes
    }

    func readLog(_ directory: String, _ name: String, expectNoCorruption: Bool) -> Int {
        var count = 0
        var state = AuthState()
        guard let reader = try? LogReader(logDirectory: directory + "/log", chain: .full) else { return 0 }
        loop: while count < 100_000 {
            switch reader.next() {
            case .record(let record):
                count += 1
                if let body = try? EventCodec.decode(kind: record.keys.type, payload: record.payload) {
                    state.apply(Event(time: record.time, body))
                }
            case .end, .tornTail:
                break loop
            case .corruption(let corruption):
                XCTAssertFalse(expectNoCorruption, "\(name): a log cut at its end reads as corruption: \(corruption)")
                break loop
            }
        }
        _ = StateCodec.encode(state)
        if let log = try? EventLog.open(directory, options: EventLog.Options(readOnly: true)) {
            XCTAssertEqual(log.recovery.lastSeq, UInt64(count), "\(name): open and the reader disagree")
        }
        _ = try? EventLog.verify(directory)
        return count
    }

    func truncation(_ directory: String, _ rest: [UInt8], _ name: String) {
        guard rest.count >= 2 else { return }
        var bytes = SegmentHeader(firstSeq: 1, chainBefore: .zero).encoded()
        var ends: [Int] = []
        var offset = 2
        var seq: UInt64 = 1
        while offset + 2 <= rest.count && seq < 64 {
            let kind = UInt16(rest[offset] % 26)
            // At most 39 bytes: a payload can then never hold a whole record, which
        // FORMAT.md would (rightly) read as corruption rather than a torn tail.
        let length = min(Int(rest[offset + 1]) % 40, rest.count - offset - 2)
            let payload = Array(rest[(offset + 2)..<(offset + 2 + length)])
            offset += 2 + length
            payload.withUnsafeBytes { raw in
                RecordFormat.encode(seq: seq, time: Int64(seq), keys: RecordKeys(type: kind, uid: UInt32(seq % 3)), payload: raw, into: &bytes)
            }
            ends.append(bytes.count)
            seq += 1
        }
        let cutAt = SegmentHeader.size + (Int(rest[0]) << 8 | Int(rest[1])) % (bytes.count - SegmentHeader.size + 1)
        _ = FileManager.default.createFile(atPath: directory + "/log/" + SegmentName.fileName(1), contents: Data(bytes[..<cutAt]))
        let count = readLog(directory, name, expectNoCorruption: true)
        XCTAssertEqual(count, ends.filter { $0 <= cutAt }.count, "\(name): cut at \(cutAt) of \(bytes.count)")
    }
}

/// The crash behind regressions/codec/F1-prompt-shown-for-unknown-context,
/// reduced: a `prompt-shown` record for a context the state does not hold
/// (a forged or damaged but CRC- and chain-valid log) puts the context in
/// `AuthState.prompting`; a snapshot of that state cannot be decoded again
/// ("implausible prompting count"), so every later start replays the whole log.
final class StateCodecRegressionTests: XCTestCase {
    func testPromptShownForAnUnknownContextKeepsTheStateEncodable() throws {
        var state = AuthState()
        let ghost = ContextID(high: 1, low: 2)
        let prompt = Prompt(kind: .biometric, attempt: 1, fallbackOffered: false, attemptsLeft: 0, message: nil)
        state.apply(Event(time: 1_000_000, .promptShown(uid: 1000, ctx: ghost, eval: 1, prompt: prompt)))
        let decoded = try? StateCodec.decode(StateCodec.encode(state))
        XCTAssertEqual(decoded, state, "StateCodec cannot round-trip the fold of a log holding prompt-shown for an unknown context")
    }
}
