// What each step of reading the log answers (FORMAT.md "Decoding"): a
// record, the clean end, a torn tail, or corruption at (segment, offset,
// seq) with its reason; and how much of the hash chain a reader checks.

public enum CorruptionReason: String, Sendable, Equatable, CaseIterable {
    case crcMismatch = "crc mismatch"
    case badLength = "bad length"
    case badFlags = "bad key flags"
    case seqGap = "seq gap"
    case chainBreak = "chain break"
    case badSegmentHeader = "bad segment header"
    case missingSegment = "missing segment"
    case reorderedSegment = "reordered segment"
    case duplicateSegment = "duplicate segment"
    case unreadableSegment = "unreadable segment"
    /// A sealed segment whose records end at another seq or chain head than its seal says.
    case sealMismatch = "segment does not match its seal"
}

/// The first place where the log cannot be trusted.
public struct Corruption: Error, Sendable, Equatable, CustomStringConvertible {
    /// The segment, by the first seq in its name.
    public var segment: UInt64
    public var offset: Int
    /// The seq expected at that place (the first one that cannot be trusted).
    public var seq: UInt64
    public var reason: CorruptionReason
    public var detail: String

    public var description: String {
        "\(reason.rawValue) at \(SegmentName.fileName(segment)) offset \(offset) seq \(seq)"
            + (detail.isEmpty ? "" : ": \(detail)")
    }
}

/// An incomplete final write at the end of the last segment (FORMAT.md).
public struct TornTail: Sendable, Equatable, CustomStringConvertible {
    public var segment: UInt64
    /// Where the cut goes: the end of the last good record.
    public var offset: Int
    /// Bytes from `offset` to the end of the file.
    public var length: Int
    /// The last good seq before it (0 when none).
    public var lastSeq: UInt64
    public var reason: String

    public var description: String {
        "torn tail at \(SegmentName.fileName(segment)) offset \(offset) (\(length) bytes, \(reason))"
    }
}

/// One record, valid until the next call to `LogReader.next()`.
public struct Record {
    public var seq: UInt64
    /// Microseconds since the Unix epoch.
    public var time: Int64
    public var keys: RecordKeys
    public var payload: UnsafeRawBufferPointer
    /// The whole record as on disk (what the hash chain covers).
    public var bytes: UnsafeRawBufferPointer
    public var position: LogPosition
}

public enum ReadStep {
    case record(Record)
    case end
    case tornTail(TornTail)
    case corruption(Corruption)
}

/// How much of the hash chain a reader recomputes and checks.
public enum ChainCheck: Sendable, Equatable {
    /// None: the fast replay path.
    case none
    /// Only the last segment, from its header (enough to continue the chain).
    case lastSegment
    /// Every record, checked against every segment header.
    case full
}
