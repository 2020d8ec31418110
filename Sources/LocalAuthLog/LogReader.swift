// The decoder shared by the daemon (open, replay) and the offline tools
// (log, replay, verify, repair). Each step answers exactly one of: a record,
// the clean end, a torn tail, or corruption at (segment, offset, seq)
// (FORMAT.md "Decoding"). A segment is read whole into one reused buffer and
// records are handed out as slices of it, so the hot path allocates nothing.

import Glibc
import LocalAuthSystem

public final class LogReader {
    public let directory: String
    let storage: any Storage
    /// First seqs of the segment files, from their names, ascending.
    public let segments: [UInt64]
    /// The chain head after the last record returned (nil when not hashing).
    public var chainHead: ChainHead? { chainStream?.head }
    /// The current segment's chain, fed every record read so far.
    var chainStream: ChainStream? {
        catchUp()
        return stream
    }
    /// The last seq returned or skipped (0 before any).
    public private(set) var lastSeq: UInt64 = 0

    private let fromSeq: UInt64
    private let chainCheck: ChainCheck
    /// The current segment's chain (nil when not hashing), fed the records
    /// before `hashedTo`: checked records are hashed in runs, when a head is
    /// asked for or the segment is left, not one SHA-256 call per record.
    private var stream: ChainStream?
    private var hashedTo = 0
    private var segmentIndex: Int
    private var buffer: UnsafeMutableRawBufferPointer = .init(start: nil, count: 0)
    private var size = 0
    private var offset = 0
    private var expectedSeq: UInt64 = 0
    private var loaded = false
    private var finished: ReadStep?
    /// Sealed segments are checked by their seal and skipped (FORMAT.md "Seals").
    private let trustSeals: Bool
    /// The current segment was checked by its seal: no records to hand out.
    private var skipping = false
    /// The seal of the current segment, which is scanned because its bytes did not match it.
    private var pendingSeal: SegmentSeal?
    /// Seals computed for non-last segments scanned record by record while
    /// trusting seals (seal missing or wrong): what a writable open writes.
    private(set) var resealable: [SegmentSeal] = []
    /// Segments skipped by their seal.
    private(set) var sealedSegmentsSkipped = 0
    /// The head the next segment must start from was taken from a seal, not computed.
    private var headFromSeal = false
    /// The usable seals of the non-last segments, and their segments' hashes
    /// computed ahead on every usable CPU (SealedHashing), when trusting seals.
    private var seals: [UInt64: SegmentSeal] = [:]
    private var sealedHashing: SealedHashing?
    private var sealedJobs: [UInt64: Int] = [:]
    /// Sealed segments whose records are all at or before this seq (the
    /// newest snapshot's) are not hashed: their header, length and seams are
    /// checked, and they are handed to `deferred` for a later check (S-49).
    private let deferThrough: UInt64
    /// The segments so passed over, in order.
    private(set) var deferred: [DeferredSegment] = []

    /// Reads `<directory>` (a log directory of `.seg` files) from `seq`.
    public convenience init(
        storage: any Storage = DiskStorage.shared, logDirectory: String, from seq: UInt64 = 1, chain: ChainCheck = .none
    ) throws(SystemError) {
        try self.init(storage: storage, logDirectory: logDirectory, from: seq, chain: chain, trustSeals: false)
    }

    /// `trustSeals`: the daemon's open. Every non-last segment with a usable
    /// seal is checked by it (header, length, its records' SHA-256 chain, seq
    /// and chain seams) and its records are not handed out; other segments are read
    /// record by record. Implies the `.full` chain from seq 1.
    /// `deferThrough` (with `trustSeals`): see `deferred`.
    init(
        storage: any Storage, logDirectory: String, from seq: UInt64 = 1, chain: ChainCheck, trustSeals: Bool,
        deferThrough: UInt64 = 0
    ) throws(SystemError) {
        self.storage = storage
        self.trustSeals = trustSeals
        self.deferThrough = trustSeals ? deferThrough : 0
        let chain = trustSeals ? ChainCheck.full : chain
        let seq = trustSeals ? 1 : seq
        directory = logDirectory
        let names = try storage.entries(logDirectory)
            .compactMap { SegmentName.parse($0, suffix: SegmentName.segmentSuffix) }.sorted()
        let start = max(seq, 1)
        segments = names
        fromSeq = start
        chainCheck = chain
        // Start at the last segment whose name is <= seq (records before seq are skipped).
        segmentIndex = names.lastIndex(where: { $0 <= start }) ?? 0
        if chain == .full && segmentIndex == 0 { stream = ChainStream(before: .zero) }
        if trustSeals {
            var paths: [String] = []
            for name in names.dropLast() {
                guard let seal = SegmentSeal.load(storage, logDirectory, name) else { continue }
                seals[name] = seal
                if seal.lastSeq <= self.deferThrough { continue }
                sealedJobs[name] = paths.count
                paths.append(logDirectory + "/" + SegmentName.fileName(name))
            }
            if !paths.isEmpty { sealedHashing = SealedHashing(storage: storage, paths: paths, workers: storage.readers) }
        }
    }

    deinit {
        sealedHashing?.stop()
        buffer.deallocate()
    }

    public var isLastSegment: Bool { segmentIndex >= segments.count - 1 }
    /// The segment being read (its first seq), if any.
    public var currentSegment: UInt64? { segments.isEmpty ? nil : segments[min(segmentIndex, segments.count - 1)] }
    /// The offset just after the last good record of the current segment.
    public var currentOffset: Int { offset }
    /// Size of the current segment file as read.
    public var currentSize: Int { size }

    public func next() -> ReadStep {
        if let finished { return finished }
        while true {
            if !loaded {
                if segments.isEmpty { return finish(.end) }
                if let step = load() { return finish(step) }
            }
            if offset == size {
                if isLastSegment { return finish(.end) }
                if trustSeals, let step = endOfScannedSegment() { return finish(step) }
                segmentIndex += 1
                loaded = false
                continue
            }
            // One record's framing, as RecordFraming checks it (the
            // simulator decodes its in-memory log with the same code).
            // FORMAT.md "Preallocation": zeros after the last record of the
            // last segment are space the writer reserved, the log's clean end.
            let raw = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<size])
            switch RecordFraming.check(raw, at: offset, expectedSeq: expectedSeq, zerosEnd: isLastSegment) {
            case .zeros:
                return finish(.end)
            case .damaged(let detail, let reason):
                return finish(damaged(detail, reason))
            case .untrusted(let detail, let reason):
                return finish(.corruption(corruption(reason, detail)))
            case .record(let seq, let time, let keys, let payload, let end):
                let position = LogPosition(segment: segments[segmentIndex], offset: offset)
                let record = UnsafeRawBufferPointer(rebasing: raw[offset..<end])
                offset = end
                expectedSeq = seq + 1
                lastSeq = seq
                if seq < fromSeq { continue }
                return .record(Record(
                    seq: seq, time: time, keys: keys, payload: UnsafeRawBufferPointer(rebasing: raw[payload]), bytes: record,
                    position: position))
            }
        }
    }

    /// At the end of a non-last segment while trusting seals: a scanned
    /// segment must agree with its seal (if it had one); otherwise it is
    /// remembered for re-sealing.
    private func endOfScannedSegment() -> ReadStep? {
        if skipping { return nil }
        let name = segments[segmentIndex]
        guard let head = chainHead else { return nil }
        let last = expectedSeq - 1
        if let seal = pendingSeal, seal.lastSeq != last || seal.chainHead != head {
            return .corruption(corruption(
                .sealMismatch, "records end at seq \(last), seal says \(seal.lastSeq)"
                    + (seal.chainHead == head ? "" : " with another chain head")))
        }
        guard last >= name else { return nil }
        resealable.append(SegmentSeal(
            firstSeq: name, lastSeq: last, length: size, chainHead: head,
            fileCRC: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<size]))))
        return nil
    }

    /// Feeds the records checked since the last call to the chain.
    private func catchUp() {
        guard stream != nil, hashedTo < offset else { return }
        stream!.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[hashedTo..<offset]))
        hashedTo = offset
    }

    private func finish(_ step: ReadStep) -> ReadStep {
        if case .record = step { return step }
        finished = step
        return step
    }

    private func corruption(_ reason: CorruptionReason, _ detail: String, at place: Int? = nil) -> Corruption {
        Corruption(segment: segments[segmentIndex], offset: place ?? offset, seq: expectedSeq, reason: reason, detail: detail)
    }

    /// A record that does not decode: a torn tail when in the last segment and
    /// no intact record follows, else corruption.
    private func damaged(_ detail: String, _ reason: CorruptionReason) -> ReadStep {
        if isLastSegment && !intactRecordFollows() {
            return .tornTail(TornTail(
                segment: segments[segmentIndex], offset: offset, length: tornLength(),
                lastSeq: expectedSeq - 1, reason: detail))
        }
        return .corruption(corruption(reason, detail))
    }

    /// How many bytes from `offset` the torn write covers (what a cut keeps
    /// in `.broken`): the record its length field claims, and any non-zero
    /// byte after it; zeros after both are preallocated space.
    private func tornLength() -> Int {
        let remaining = size - offset
        guard remaining >= RecordFormat.prefixSize else { return remaining }
        let raw = UnsafeRawBufferPointer(buffer)
        var end = size
        while end > offset && raw[end - 1] == 0 { end -= 1 }
        let length = Int(RecordFormat.u32(raw, offset))
        if length >= RecordFormat.fixedBodySize, length <= RecordFormat.maxBodySize {
            end = max(end, min(size, offset + RecordFormat.prefixSize + length))
        }
        return end - offset
    }

    /// Looks for a CRC-valid record with a plausible later seq after the damage.
    private func intactRecordFollows() -> Bool {
        RecordFraming.intactRecordFollows(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<size]),
                                          after: offset, expectedSeq: expectedSeq)
    }

    /// Reads segment `segmentIndex` and checks its header against its name and
    /// what came before. Returns a step only when the segment cannot be used.
    private func load() -> ReadStep? {
        let name = segments[segmentIndex]
        let path = directory + "/" + SegmentName.fileName(name)
        catchUp()  // the segment left, while its bytes are still in the buffer
        offset = 0
        hashedTo = 0
        size = 0
        skipping = false
        pendingSeal = nil
        if trustSeals && !isLastSegment, let seal = seals[name], seal.lastSeq <= deferThrough {
            let probe: (header: SegmentHeader?, bytes: [UInt8], length: Int)
            do throws(SystemError) { probe = try DeferredSegment.header(storage, path) } catch {
                return .corruption(Corruption(segment: name, offset: 0, seq: expectedSeq, reason: .unreadableSegment, detail: error.description))
            }
            if let step = probe.bytes.withUnsafeBytes({ checkHeader(probe.header, name, raw: $0) }) { return step }
            if let header = probe.header, probe.length == seal.length {
                deferred.append(DeferredSegment(firstSeq: name, lastSeq: seal.lastSeq, chainBefore: header.chainBefore, seal: seal))
                expectedSeq = seal.lastSeq + 1
                lastSeq = seal.lastSeq
                stream = ChainStream(before: seal.chainHead)
                headFromSeal = true
                skipping = true
                loaded = true
                return nil
            }
            // A length that differs from the seal's: scanned now, as an open that hashes would.
            pendingSeal = seal
        } else if trustSeals && !isLastSegment, let seal = seals[name], let job = sealedJobs[name], let hashing = sealedHashing {
            let probe: SealedSegmentProbe
            switch hashing.result(job) {
            case .success(let found): probe = found
            case .failure(let error):
                return .corruption(Corruption(segment: name, offset: 0, seq: expectedSeq, reason: .unreadableSegment, detail: error.description))
            }
            // The chain itself, not a CRC: a rewrite that recomputes the
            // records' CRCs and the seal's file CRC still changes the
            // SHA-256 stream, whose head the next segment and the
            // journal anchor hold (S-49, FORMAT.md "Seals").
            let header = probe.header, headerBytes = probe.headerBytes
            let matches = header != nil && probe.length == seal.length && probe.head == seal.chainHead
            if let step = headerBytes.withUnsafeBytes({ checkHeader(header, name, raw: $0) }) { return step }
            if matches {
                expectedSeq = seal.lastSeq + 1
                lastSeq = seal.lastSeq
                stream = ChainStream(before: seal.chainHead)
                headFromSeal = true
                skipping = true
                sealedSegmentsSkipped += 1
                loaded = true
                return nil
            }
            // Find the first bad byte exactly (and check the seal after it).
            pendingSeal = seal
        }
        do throws(SystemError) {
            let file = try SegmentFile.open(storage, path, .readOnly)
            defer { file.close() }
            let fileSize = try file.size()
            if buffer.count < fileSize {
                buffer.deallocate()
                buffer = .allocate(byteCount: max(fileSize, buffer.count * 2), alignment: 16)
            }
            size = try file.preadFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<fileSize]), at: 0)
        } catch {
            return .corruption(Corruption(segment: name, offset: 0, seq: expectedSeq, reason: .unreadableSegment, detail: error.description))
        }
        let raw = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<size])
        if let step = checkHeader(SegmentHeader.decode(raw), name, raw: raw) { return step }
        offset = SegmentHeader.size
        hashedTo = offset
        loaded = true
        return nil
    }

    /// The checks of a segment header against its name and what came before;
    /// sets the chain head to continue from. A step only when it cannot be used.
    private func checkHeader(_ header: SegmentHeader?, _ name: UInt64, raw: UnsafeRawBufferPointer) -> ReadStep? {
        let first = segmentIndex == 0 || expectedSeq == 0
        if first { expectedSeq = name }
        guard let header else {
            // Segments are created complete under a temporary name, so a bad
            // header is never a torn write: always corruption.
            return .corruption(corruption(.badSegmentHeader, SegmentHeader.problem(raw), at: 0))
        }
        if header.firstSeq != name {
            // A copy of an earlier segment under a later name, or a later one in an earlier place.
            let reason: CorruptionReason = header.firstSeq < name ? .duplicateSegment : .reorderedSegment
            return .corruption(corruption(reason, "header says first seq \(header.firstSeq)", at: 0))
        }
        if segmentIndex == 0 && fromSeq == 1 && name != 1 {
            expectedSeq = 1
            return .corruption(corruption(.missingSegment, "the log starts at seq \(name)", at: 0))
        }
        if name > expectedSeq {
            return .corruption(corruption(.missingSegment, "next segment starts at seq \(name)", at: 0))
        }
        if name < expectedSeq {
            return .corruption(corruption(.duplicateSegment, "segment overlaps seqs before \(expectedSeq)", at: 0))
        }
        switch chainCheck {
        case .none: stream = nil
        case .lastSegment: stream = isLastSegment ? ChainStream(before: header.chainBefore) : nil
        case .full:
            if let head = chainHead, head != header.chainBefore {
                let source = headFromSeal
                    ? "the previous segment's seal \(head.hex.prefix(16)) (the seal or this header is wrong; verify, which reads every record, tells which)"
                    : "computed \(head.hex.prefix(16))"
                return .corruption(corruption(.chainBreak, "segment header chain \(header.chainBefore.hex.prefix(16)) != \(source)", at: 0))
            }
            headFromSeal = false
            stream = ChainStream(before: header.chainBefore)
        }
        return nil
    }
}
