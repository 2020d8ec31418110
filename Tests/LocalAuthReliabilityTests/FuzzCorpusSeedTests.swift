// Seeds of the codec and log fuzzers (Tests/Fuzz/corpus) for the binary
// layouts added in v1.1: context-created layout 2 (S-42's origin),
// enrollment-changed layout 2 (S-43's source), and kinds 26..32
// (passcode-refused, snapshot-recorded, log-rollback-accepted, right-*),
// and kind 33 (policy-checked-repeatedly, S-48).
// The bytes are made here with the real EventCodec, StateCodec and EventLog,
// in the input formats of Tests/Fuzz/CodecFuzz.swift and LogFuzz.swift. The
// test checks that the committed seeds are exactly what this makes (so a
// layout change shows as a stale seed); LOCALAUTH_WRITE_FUZZ_SEEDS=1 writes
// them instead. FuzzRegressionTests runs them through the fuzzers' checks.
import Foundation
import Glibc
import LocalAuthCore
@testable import LocalAuthLog
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class FuzzCorpusSeedTests: XCTestCase {
    static let onBehalf = ContextID(high: 0x0123_4567_89AB_CDEF, low: 0x0FED_CBA9_8765_4321)
    static let own = ContextID(high: 0x1111_2222_3333_4444, low: 0x5555_6666_7777_8888)
    static let token = "9c1b5e0f2a7d4c3b8e6f1a2d3c4b5a69"

    /// One event of each new layout, in an order the fold accepts.
    static let events: [EventBody] = [
        .daemonStarted(version: "0.1.0", bootID: "d7619345494fd49f785434f047e61d51", pid: 42),
        .contextCreated(uid: 1000, ctx: onBehalf, pid: 4242, origin: ContextOrigin(
            caller: 0, service: "sudo", tty: "/dev/pts/1", rhost: "host.example", passcodePrompts: false)),
        .contextCreated(uid: 1000, ctx: own, pid: 4243),
        .enrollmentChanged(uid: 1000, templates: ["left-thumb", "right-index-finger"], by: 0, domainState: token, source: .fprintd),
        .passcodeRefused(uid: 1000, ctx: onBehalf, eval: 1, retryAfter: 60_000_000),
        .passcodeRefused(uid: 1000, ctx: nil, eval: nil, retryAfter: 0),
        .snapshotRecorded(snapshotSeq: 7, sha256: String(repeating: "ab", count: 32)),
        .logRollbackAccepted(journalSeq: 12, logSeq: 9, by: 0),
        .rightSaved(uid: 1000, identifier: "com.example.vault", requirement: .biometryCurrentSet),
        .rightAuthorized(uid: 1000, ctx: own, identifier: "com.example.vault", method: .biometric),
        .rightSecretRead(uid: 1000, ctx: own, identifier: "com.example.vault"),
        .rightRemoved(uid: 1000, identifier: "com.example.vault", requirement: .biometryCurrentSet),
        .enrollmentChanged(uid: 1000, templates: [], by: 0, domainState: "", source: .fprintd),
        .policyCheckedRepeatedly(RepeatedChecks(uid: 1000, ctx: own, policy: .biometrics, biometry: .touchID,
                                                result: .biometryNotEnrolled, reason: nil, count: 16, span: 250)),
    ]

    /// CodecFuzz's record: kind, time step (seconds), length, payload.
    static func codecRecord(_ body: EventBody) -> [UInt8] {
        let payload = EventCodec.encode(body)
        precondition(payload.count < 256 && body.kind.rawValue < 250)
        return [UInt8(body.kind.rawValue), 1, UInt8(payload.count)] + payload
    }

    static func foldedState() -> AuthState {
        var state = AuthState()
        for (index, body) in events.enumerated() { state.apply(Event(time: 1_750_000_000_000_000 + Int64(index), body)) }
        return state
    }

    /// A log directory written by the real EventLog: its first segment's bytes.
    static func segment() throws -> [UInt8] {
        let directory = TemporaryDirectory(prefix: "localauth-seeds-")
        let log = try EventLog.open(directory.path)
        for (index, body) in events.enumerated() {
            _ = try log.append(time: 1_750_000_000_000_000 + Int64(index),
                               keys: RecordKeys(type: body.kind.rawValue, uid: body.uid, context: body.ctx),
                               payload: EventCodec.encode(body))
        }
        try log.write()
        try log.close()
        // What the fuzzer will read: every record, each decoding to its event.
        let reader = try LogReader(logDirectory: directory.path + "/log", chain: .full)
        var decoded: [EventBody] = []
        while case .record(let record) = reader.next() {
            decoded.append(try EventCodec.decode(kind: record.keys.type, payload: record.payload))
        }
        guard decoded == events else { throw HarnessError("the segment reads back as \(decoded)") }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/log").filter { $0.hasSuffix(".seg") }.sorted()
        guard let first = names.first else { throw HarnessError("no segment written") }
        return Array(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/log/" + first)))
    }

    static func seeds() throws -> [(String, [UInt8])] {
        var codec: [(String, [UInt8])] = [("codec/v1.1-events", [0] + events.flatMap(codecRecord))]
        var seen: Set<String> = []
        for body in events where body.kind != .daemonStarted {
            let code = body.kind.rawValue < 10 ? "0\(body.kind.rawValue)" : "\(body.kind.rawValue)"
            let name = "codec/v1.1-kind-\(code)-\(body.kind.name)-v\(body.kind.layoutVersion)"
            guard seen.insert(name).inserted else { continue }
            codec.append((name, [0] + codecRecord(body)))
        }
        let state = StateCodec.encode(foldedState())
        codec.append(("codec/v1.1-state", [1] + state))

        let segment = try segment()
        // LogFuzz mode 3: cut (2 bytes), then (kind, length < 40, payload) per record.
        let small = events.map { ($0.kind.rawValue, EventCodec.encode($0)) }.filter { $0.1.count < 40 }
        let truncation: [UInt8] = [3, 0x01, 0x00] + small.flatMap { [UInt8($0.0), UInt8($0.1.count)] + $0.1 }
        // LogFuzz mode 2: seq (8 bytes, big-endian), the damage offset, the payload.
        let snapshot: [UInt8] = [2] + [0, 0, 0, 0, 0, 0, 0, 13] + [0] + state
        return codec + [
            ("log/v1.1-segment-raw", [0] + segment),
            ("log/v1.1-segment-patched", [1] + Array(segment[SegmentHeader.size...])),
            ("log/v1.1-truncation", truncation),
            ("log/v1.1-snapshot", snapshot),
        ]
    }

    func test_theCommittedSeedsAreTheV11LayoutsAsTheRealCodecsWriteThem() throws {
        let corpus = FuzzRegressionTests.fuzzDirectory + "/corpus/"
        let seeds = try Self.seeds()
        XCTAssertEqual(seeds.count, 16, seeds.map(\.0).joined(separator: " "))
        if getenv("LOCALAUTH_WRITE_FUZZ_SEEDS") != nil {
            for (name, bytes) in seeds { try Data(bytes).write(to: URL(fileURLWithPath: corpus + name)) }
            return
        }
        for (name, bytes) in seeds {
            let committed = FileManager.default.contents(atPath: corpus + name).map(Array.init)
            XCTAssertEqual(committed, bytes, "\(name) is stale: LOCALAUTH_WRITE_FUZZ_SEEDS=1 swift test --filter FuzzCorpusSeedTests")
        }
        // Every kind the seeds name decodes, at the layout this build writes.
        let kinds = Set(Self.events.map(\.kind))
        XCTAssertTrue(Set([EventKind.contextCreated, .enrollmentChanged, .passcodeRefused, .snapshotRecorded,
                           .logRollbackAccepted, .rightSaved, .rightRemoved, .rightAuthorized, .rightSecretRead, .policyCheckedRepeatedly]).isSubset(of: kinds))
        // The codec seed, read as CodecFuzz reads it, is these events.
        var bytes = seeds[0].1.dropFirst()
        var decoded: [EventBody] = []
        while bytes.count >= 3 {
            let kind = UInt16(bytes[bytes.startIndex]), length = Int(bytes[bytes.startIndex + 2])
            let payload = Array(bytes.dropFirst(3).prefix(length))
            bytes = bytes.dropFirst(3 + length)
            decoded.append(try EventCodec.decode(kind: kind % UInt16(EventKind.allCases.count + 1), payload: payload))
        }
        XCTAssertEqual(decoded, Self.events)
    }
}
