// `localauthctl verify`: every record's CRC, seq continuity and the whole hash
// chain, every segment header, and every snapshot against the log. Read-only:
// it runs on the live directory or on a copy, daemon running or not.

import LocalAuthCore
import LocalAuthSystem

/// A seal that does not agree with its segment (FORMAT.md "Seals"). The data
/// is not at fault when the records verify; `repair` moves the seal aside.
public struct SealProblem: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var reason: String
    public var description: String { "seal \(file): \(reason)" }
}

public struct VerifyReport: Sendable, Equatable, CustomStringConvertible {
    public var segments = 0
    public var records: UInt64 = 0
    public var lastSeq: UInt64 = 0
    /// chain[lastSeq]: compare it with one noted earlier to detect a rewrite.
    public var chainHead = ChainHead.zero
    /// The first bad record (segment, offset, seq), if any.
    public var corruption: Corruption?
    /// An unfinished final write; not a failure (open cuts it).
    public var tornTail: TornTail?
    public var snapshotsChecked = 0
    public var snapshotProblems: [SkippedSnapshot] = []
    public var sealsChecked = 0
    public var sealProblems: [SealProblem] = []

    /// Snapshots whose digest matches their `snapshot-recorded` event and
    /// whose state equals the fold of the log up to their seq (S-49).
    public var snapshotsAgreeing = 0
    /// Snapshots that agree with the fold but no event vouches for (the daemon
    /// died between writing one and recording it): not used, not a failure.
    public var snapshotNotes: [String] = []
    /// A CRC-valid record whose payload does not decode as an event: no
    /// state is compared past it. Not a failure of the log format (this
    /// module stores opaque payloads); `localauthctl verify` fails on it.
    public var undecodable: String?

    public var isOK: Bool { corruption == nil && snapshotProblems.isEmpty && sealProblems.isEmpty }

    public var description: String {
        var lines: [String] = []
        if let corruption {
            lines.append("FAILED: first bad record: \(corruption)")
        } else {
            lines.append("OK: \(records) records, seq 1...\(lastSeq), \(segments) segments, chain head \(chainHead.hex)")
        }
        if let tornTail { lines.append("note: \(tornTail); the next open cuts it") }
        for problem in snapshotProblems { lines.append("FAILED: \(problem)") }
        for problem in sealProblems { lines.append("FAILED: \(problem)") }
        if let undecodable { lines.append("note: \(undecodable)") }
        for note in snapshotNotes { lines.append("note: \(note)") }
        if snapshotsAgreeing > 0 { lines.append("\(snapshotsAgreeing) snapshots agree with the log") }
        return lines.joined(separator: "\n")
    }
}

extension EventLog {
    /// Checks the log and snapshots of the state directory `directory`.
    public static func verify(_ directory: String, storage: any Storage = DiskStorage.shared) throws(LogError) -> VerifyReport {
        var report = VerifyReport()
        let store = SnapshotStore(directory: directory, storage: storage)
        let snapshotSeqs: Set<UInt64>
        do throws(SystemError) { snapshotSeqs = Set(try store.list()) } catch { throw .io(error) }
        var headsAtSnapshots: [UInt64: ChainHead] = [:]
        if snapshotSeqs.contains(0) { headsAtSnapshots[0] = .zero }
        // S-49: the state rebuilt from the log, compared with every snapshot at
        // its seq, and the digests the log recorded for them.
        var loaded: [UInt64: Result<Snapshot, SkippedSnapshot>] = [:]
        for seq in snapshotSeqs { loaded[seq] = store.load(seq) }
        var fold = AuthState()
        var folding = true
        var stateAgrees: [UInt64: Bool] = [:]
        var recorded: [UInt64: (seq: UInt64, sha256: String)] = [:]
        func compare(_ seq: UInt64) {
            guard folding, case .success(let snapshot)? = loaded[seq] else { return }
            stateAgrees[seq] = (try? StateCodec.decode(snapshot.payload)) == fold
        }
        compare(0)
        if storage.exists(directory + "/log") {
            let reader: LogReader
            do throws(SystemError) { reader = try LogReader(storage: storage, logDirectory: directory + "/log", chain: .full) } catch {
                throw .io(error)
            }
            report.segments = reader.segments.count
            // Where each segment read ends: (last seq, chain head), to check the seals.
            var ends: [UInt64: (UInt64, ChainHead)] = [:]
            var segment: UInt64?
            scan: while true {
                switch reader.next() {
                case .record(let record):
                    if segment != record.position.segment {
                        // The reader checked that this segment starts from the
                        // head the one before ended with.
                        if let segment { ends[segment] = (report.lastSeq, reader.chainStream?.before ?? .zero) }
                        segment = record.position.segment
                    }
                    report.records += 1
                    report.lastSeq = record.seq
                    if folding {
                        do {
                            let body = try EventCodec.decode(kind: record.keys.type, payload: record.payload)
                            if case .snapshotRecorded(let covered, let digest) = body { recorded[covered] = (record.seq, digest) }
                            fold.apply(Event(time: record.time, body))
                        } catch {
                            report.undecodable = "seq \(record.seq) at \(record.position) does not decode: \(error)"
                            folding = false
                        }
                    }
                    if snapshotSeqs.contains(record.seq) {
                        headsAtSnapshots[record.seq] = reader.chainHead
                        compare(record.seq)
                    }
                case .end: break scan
                case .tornTail(let torn):
                    report.tornTail = torn
                    break scan
                case .corruption(let corruption):
                    report.corruption = corruption
                    break scan
                }
            }
            report.chainHead = reader.chainHead ?? .zero
            if let segment { ends[segment] = (report.lastSeq, report.chainHead) }
            checkSeals(storage, directory + "/log", segments: reader.segments, ends: ends, complete: report.corruption == nil, into: &report)
        }
        for seq in snapshotSeqs.sorted() {
            report.snapshotsChecked += 1
            switch loaded[seq]! {
            case .failure(let skip): report.snapshotProblems.append(skip)
            case .success(let snapshot):
                let file = SegmentName.hex(seq) + SnapshotStore.suffix
                func problem(_ reason: String, beyondLog: Bool = false) {
                    report.snapshotProblems.append(SkippedSnapshot(file: file, reason: reason, beyondLog: beyondLog))
                }
                guard let head = headsAtSnapshots[seq] else {
                    if report.corruption == nil { problem("covers seq \(seq), beyond the log (seq \(report.lastSeq))", beyondLog: true) }
                    continue
                }
                if head != snapshot.chainHead {
                    problem("chain head differs from the log's at seq \(seq)")
                    continue
                }
                if let (at, digest) = recorded[seq], digest != snapshot.fileDigest.hex {
                    problem("its SHA-256 \(snapshot.fileDigest.hex) differs from the one recorded at seq \(at) (changed after it was written)")
                    continue
                }
                guard let agrees = stateAgrees[seq] else { continue }  // not folded that far (undecodable record)
                if !agrees {
                    problem("its state differs from the log's replayed to seq \(seq)")
                    continue
                }
                if recorded[seq] == nil {
                    report.snapshotNotes.append("snapshot \(file) agrees with the log but no snapshot-recorded event vouches for it; "
                        + "the daemon does not use it")
                } else {
                    report.snapshotsAgreeing += 1
                }
            }
        }
        return report
    }

    /// Every seal against the segment as read: seqs, chain head, length and whole-file CRC32C.
    private static func checkSeals(
        _ storage: any Storage, _ logDirectory: String, segments: [UInt64], ends: [UInt64: (UInt64, ChainHead)], complete: Bool,
        into report: inout VerifyReport
    ) {
        // Not the last segment's: it is never trusted by a seal (open drops one left
        // by a crash during rotation), and on a live log it may grow and be sealed
        // while this runs.
        for segment in segments.dropLast() where storage.exists(SegmentSeal.path(logDirectory, segment)) {
            report.sealsChecked += 1
            let file = SegmentSeal.fileName(segment)
            guard let seal = SegmentSeal.load(storage, logDirectory, segment) else {
                report.sealProblems.append(SealProblem(file: file, reason: "garbled (magic, version, checksum or fields)"))
                continue
            }
            guard let (lastSeq, head) = ends[segment] else {
                if complete { report.sealProblems.append(SealProblem(file: file, reason: "its segment holds no records")) }
                continue
            }
            if lastSeq != seal.lastSeq {
                report.sealProblems.append(SealProblem(file: file, reason: "says last seq \(seal.lastSeq), segment ends at \(lastSeq)"))
                continue
            }
            if head != seal.chainHead {
                report.sealProblems.append(SealProblem(file: file, reason: "chain head differs from the log's at seq \(lastSeq)"))
                continue
            }
            let measured: (length: Int, crc: UInt32)
            do throws(SystemError) {
                let segmentFile = try SegmentFile.open(storage, logDirectory + "/" + SegmentName.fileName(segment), .readOnly)
                defer { segmentFile.close() }
                measured = try SegmentSeal.checksum(segmentFile)
            } catch {
                report.sealProblems.append(SealProblem(file: file, reason: "segment unreadable: \(error)"))
                continue
            }
            if measured.length != seal.length || measured.crc != seal.fileCRC {
                report.sealProblems.append(SealProblem(
                    file: file, reason: "segment is \(measured.length) bytes with CRC32C \(measured.crc), seal says \(seal.length) bytes with \(seal.fileCRC)"))
            }
        }
    }
}
