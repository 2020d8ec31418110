// Where the daemon's events go: the durable log in production. The daemon
// only needs four things from it: append (returns the seq), write what was
// appended and ask for durability, the seq up to which everything is
// durable, and whether it can still take events.
import LocalAuthCore

package protocol EventRecorder: AnyObject {
    /// Appends an event; returns its seq. Throws when the log cannot take it.
    func record(_ event: Event) throws -> UInt64
    /// `record(Event(time: time, check.event))`, without making the event:
    /// the payload written straight from the check's fields (every
    /// can-evaluate records one). A recorder may count a check identical to
    /// the one it recorded last, with nothing recorded since, into that
    /// check's record (kind 33, CheckRun.swift): it then returns the same
    /// seq, and the caller folds the check as a repeat. Such a record is
    /// appended before anything else and by `flush`, and `lastSeq` counts it.
    func record(_ check: PolicyCheck, time: Int64) throws -> UInt64
    /// Writes what was appended to the log's file (it then survives the
    /// process being killed) and asks for an fdatasync through `seq` if it
    /// is not durable yet. Called before replies are sent. Blocks on the
    /// disk only when a segment is finished (its fdatasync and seal, the next
    /// one's creation: once per SegmentSize); a write failure shows in
    /// `failure`.
    func flush(durableThrough seq: UInt64)
    /// Every event with seq <= durableSeq is on disk (fdatasync'd).
    var durableSeq: UInt64 { get }
    /// The last seq appended.
    var lastSeq: UInt64 { get }
    /// Why the log refuses events (a disk full, an I/O error), or nil.
    var failure: String? { get }
    /// File system space the appended events will take once written, a
    /// running total that never undercounts (`EventLog.bytesClaimed`): the
    /// space reserve's estimate between two looks (SpaceReserve.swift).
    var bytesClaimed: Int64 { get }
    /// `bytesClaimed` as of what is on the file already.
    var bytesClaimedWritten: Int64 { get }
}

extension EventRecorder {
    /// A recorder that writes no file (tests, the simulator) claims nothing.
    package var bytesClaimed: Int64 { 0 }
    package var bytesClaimedWritten: Int64 { 0 }
}
