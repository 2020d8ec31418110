// The sealed segments that the newest snapshot wholly covers, checked after
// the start instead of during it (S-49 as amended by issue 34 item 3). The
// state at start depends only on the snapshot, the event that vouches for
// it and the records after it, which the open checks in full; the covered
// segments hold the audit trail before the snapshot. The open
// (`Options.deferCoveredSegments`) still reads each one's header, length
// and seal and checks every seq and chain seam, so a missing, reordered,
// cut or extended segment, or a seal or header that no longer continues the
// chain, still stops the start; only the SHA-256 pass over their records
// waits. `checkDeferred` is that pass, with the same findings and messages
// as the open's (a changed record named exactly, else `sealMismatch`).

import LocalAuthSystem

/// A sealed segment the open checked by its header, length and seal, but
/// whose records it did not hash.
public struct DeferredSegment: Sendable, Equatable {
    public var firstSeq: UInt64
    public var lastSeq: UInt64
    /// The header's "chain before" as the open saw it (its seam was checked).
    var chainBefore: ChainHead
    /// The seal whose chain head the next segment continues from.
    var seal: SegmentSeal

    /// The header of the segment file at `path`, its raw bytes, and the file's length.
    static func header(_ storage: any Storage, _ path: String) throws(SystemError)
        -> (header: SegmentHeader?, bytes: [UInt8], length: Int) {
        let file = try SegmentFile.open(storage, path, .readOnly)
        defer { file.close() }
        let length = try file.size()
        let bytes = try file.bytes(count: SegmentHeader.size, at: 0)
        return (bytes.withUnsafeBytes { SegmentHeader.decode($0) }, bytes, length)
    }
}

extension EventLog {
    /// The segments the open did not hash (`Options.deferCoveredSegments`)
    /// and whose records are all at or before `seq`: those a snapshot at
    /// `seq` covers. The others must be checked before the state is trusted.
    public func deferredSegments(coveredThrough seq: UInt64) -> (covered: [DeferredSegment], uncovered: [DeferredSegment]) {
        let all = recovery.deferredSegments
        return (all.filter { $0.lastSeq <= seq }, all.filter { $0.lastSeq > seq })
    }

    /// Hashes each segment's records from its header and compares the head
    /// and length with its seal: nil when all hold (or `stop` said so
    /// between two segments), else the refusal the open would have made.
    public func checkDeferred(_ segments: [DeferredSegment], stop: () -> Bool = { false }) -> LogError? {
        for segment in segments {
            if stop() { return nil }
            let name = segment.firstSeq
            let path = logDirectory + "/" + SegmentName.fileName(name)
            let probe: SealedSegmentProbe
            do throws(SystemError) { probe = try SealedSegmentProbe.run(storage, path) } catch {
                return .untrustworthy(Corruption(segment: name, offset: 0, seq: name, reason: .unreadableSegment,
                                                 detail: error.description))
            }
            if let header = probe.header, header.firstSeq == name, header.chainBefore == segment.chainBefore,
               probe.length == segment.seal.length, probe.head == segment.seal.chainHead {
                continue
            }
            return .untrustworthy(locate(segment))
        }
        return nil
    }

    /// The first bad record of a segment whose hash did not match its seal
    /// (a scan record by record, as the open does), else the seal's mismatch.
    private func locate(_ segment: DeferredSegment) -> Corruption {
        let seal = segment.seal
        var last = segment.firstSeq - 1
        var head: ChainHead?
        do throws(SystemError) {
            let reader = try LogReader(storage: storage, logDirectory: logDirectory, from: segment.firstSeq, chain: .full)
            scan: while true {
                switch reader.next() {
                case .record(let record):
                    guard record.position.segment == segment.firstSeq else { break scan }
                    last = record.seq
                    if record.seq == seal.lastSeq {
                        head = reader.chainHead
                        break scan
                    }
                case .corruption(let corruption):
                    return corruption
                case .end, .tornTail:
                    break scan
                }
            }
        } catch {
            return Corruption(segment: segment.firstSeq, offset: 0, seq: segment.firstSeq, reason: .unreadableSegment,
                              detail: error.description)
        }
        let differs = head != seal.chainHead
        return Corruption(segment: segment.firstSeq, offset: 0, seq: last + 1, reason: .sealMismatch,
                          detail: "records end at seq \(last), seal says \(seal.lastSeq)" + (differs ? " with another chain head" : ""))
    }
}
