// `localauthctl verify`: every record's CRC, seq continuity and the whole hash
// chain, every segment header, and every snapshot against the log. Read-only:
// it runs on the live directory or on a copy, daemon running or not.

import LocalAuthSystem

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

    public var isOK: Bool { corruption == nil && snapshotProblems.isEmpty }

    public var description: String {
        var lines: [String] = []
        if let corruption {
            lines.append("FAILED: first bad record: \(corruption)")
        } else {
            lines.append("OK: \(records) records, seq 1...\(lastSeq), \(segments) segments, chain head \(chainHead.hex)")
        }
        if let tornTail { lines.append("note: \(tornTail); the next open cuts it") }
        for problem in snapshotProblems { lines.append("FAILED: \(problem)") }
        if snapshotProblems.isEmpty && snapshotsChecked > 0 { lines.append("\(snapshotsChecked) snapshots agree with the log") }
        return lines.joined(separator: "\n")
    }
}

extension EventLog {
    /// Checks the log and snapshots of the state directory `directory`.
    public static func verify(_ directory: String) throws(LogError) -> VerifyReport {
        var report = VerifyReport()
        let store = SnapshotStore(directory: directory)
        let snapshotSeqs: Set<UInt64>
        do throws(SystemError) { snapshotSeqs = Set(try store.list()) } catch { throw .io(error) }
        var headsAtSnapshots: [UInt64: ChainHead] = [:]
        if snapshotSeqs.contains(0) { headsAtSnapshots[0] = .zero }
        if File.exists(directory + "/log") {
            let reader: LogReader
            do throws(SystemError) { reader = try LogReader(logDirectory: directory + "/log", chain: .full) } catch {
                throw .io(error)
            }
            report.segments = reader.segments.count
            scan: while true {
                switch reader.next() {
                case .record(let record):
                    report.records += 1
                    report.lastSeq = record.seq
                    if snapshotSeqs.contains(record.seq) { headsAtSnapshots[record.seq] = reader.chainHead }
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
        }
        for seq in snapshotSeqs.sorted() {
            report.snapshotsChecked += 1
            switch store.load(seq) {
            case .failure(let skip): report.snapshotProblems.append(skip)
            case .success(let snapshot):
                let file = SegmentName.hex(seq) + SnapshotStore.suffix
                if let head = headsAtSnapshots[seq] {
                    if head != snapshot.chainHead {
                        report.snapshotProblems.append(SkippedSnapshot(file: file, reason: "chain head differs from the log's at seq \(seq)"))
                    }
                } else if report.corruption == nil {
                    report.snapshotProblems.append(SkippedSnapshot(file: file, reason: "covers seq \(seq), beyond the log (seq \(report.lastSeq))"))
                }
            }
        }
        return report
    }
}
