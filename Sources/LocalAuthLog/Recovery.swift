// What opening a log found and did, and how it checks the segments before
// the last one (FORMAT.md "Open and recovery", "Seals").

/// What `open` found and did.
public struct Recovery: Sendable, Equatable {
    /// The last seq in the log after recovery (0 for an empty log).
    public var lastSeq: UInt64 = 0
    public var segments: Int = 0
    /// The torn tail found at the end of the last segment (cut unless read-only).
    public var tornTail: TornTail?
    /// Where the cut bytes were kept.
    public var brokenCopy: String?
    /// Segments checked by their seal instead of record by record (`.sealed`).
    public var sealedSegmentsTrusted: Int = 0
    /// Seals written by this open for segments that had none (or a wrong one).
    public var sealsWritten: Int = 0
    /// Sealed segments covered by the newest snapshot whose records the open
    /// did not hash (`Options.deferCoveredSegments`, CoveredSegments.swift).
    public var deferredSegments: [DeferredSegment] = []
}

/// How `EventLog.open` checks the segments before the last one (FORMAT.md "Seals").
public enum Verification: Sendable, Equatable {
    /// Every record of every segment (CRC, seq, `chainCheck`), and the
    /// per-context/per-user index built at once (the tools).
    case records
    /// Sealed segments by their seal (length, whole-file CRC32C, seq and chain
    /// seams), the rest record by record with the full chain; the index is
    /// built on first use (the daemon: fast start).
    case sealed
}
