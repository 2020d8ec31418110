// A record copied out of the log, with where it is.

/// A record copied out of the log (index lookups, tools).
public struct StoredRecord: Sendable, Equatable {
    public var seq: UInt64
    public var time: Int64
    public var keys: RecordKeys
    public var payload: [UInt8]
    public var position: LogPosition
}
