// Where the daemon's events go: the durable log in production. The daemon
// only needs three things from it: append (returns the seq), the seq up to
// which everything is durable, and whether it can still take events.
import LocalAuthCore

protocol EventRecorder: AnyObject {
    /// Appends an event; returns its seq. Throws when the log cannot take it.
    func record(_ event: Event) throws -> UInt64
    /// Every event with seq <= durableSeq is on disk (fdatasync'd).
    var durableSeq: UInt64 { get }
    /// The last seq appended.
    var lastSeq: UInt64 { get }
    /// Why the log refuses events (a disk full, an I/O error), or nil.
    var failure: String? { get }
}
