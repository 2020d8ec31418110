// The production EventRecorder: events encoded by the core's EventCodec,
// appended to the LocalAuthLog with index keys, made durable by the log's
// group commit. The loop writes what it appended once per turn, before that
// turn's replies go out; the log's sync thread fdatasyncs what is asked for
// and wakes the event loop through an eventfd when more becomes durable, or
// when writing failed. Identical checks that follow each other are kept as
// one run and appended as one record (CheckRun.swift, S-48).
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem
import Synchronization

final class LogRecorder: EventRecorder {
    let log: EventLog
    private var scratch = ByteWriter(capacity: 256)
    private let failureFlag: FailureFlag
    /// Room for a policy-checked payload (a longer one gets its own).
    private let payloadScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 8)
    /// The checks given a seq but not appended yet: the record they become
    /// reaches the log before anything else is appended and before the
    /// turn's write (every path to a reply goes through `flush`).
    private var run: CheckRun
    /// The seq the log gives the next record: every append goes through
    /// here (an atomic load of the log's last seq per check cost more).
    private var nextSeq: UInt64

    /// `snapshotEvery`: the daemon takes a snapshot of the state right after
    /// each seq that is a multiple of it, so a run at such a seq takes no
    /// repeats (the snapshot holds its first check's state; 0: no snapshots).
    init(log: EventLog, failure: FailureFlag, snapshotEvery: UInt64 = 0) {
        self.log = log
        self.failureFlag = failure
        run = CheckRun(standAloneEvery: snapshotEvery)
        nextSeq = log.lastSeq + 1
    }

    deinit {
        payloadScratch.deallocate()
        run.deallocate()
    }

    func record(_ event: Event) throws -> UInt64 {
        if run.isOpen { try appendRun() }
        // The buffer is moved into a local for the call (and back): reading
        // a stored property inside the closure would retain its storage.
        var writer = ByteWriter(capacity: 0)
        swap(&writer, &scratch)
        defer { swap(&writer, &scratch) }
        writer.bytes.removeAll(keepingCapacity: true)
        // Everything taken from the event before the closure: capturing it
        // copied the whole Event (an outlined copy and destroy per record).
        let time = event.time
        let keys = RecordKeys(type: event.body.kind.rawValue, uid: event.body.uid, context: event.body.ctx)
        EventCodec.encode(event.body, into: &writer)
        let seq = try writer.bytes.withUnsafeBytes { payload throws(LogError) in
            try log.append(time: time, keys: keys, payload: payload)
        }
        nextSeq = seq + 1
        return seq
    }

    /// The check's seq: the run's when it repeats the run's check (the
    /// caller folds it as a repeat, `AuthState.applyRepeated`), else a new
    /// run's, the one the log gives its next record.
    func record(_ check: PolicyCheck, time: Int64) throws -> UInt64 {
        if run.isOpen {
            if run.takes(check, time: time, scratch: payloadScratch) { return run.seq }
            try appendRun()
        }
        let size = PolicyCheckedPayload.size(check)
        guard size <= CheckRun.payloadCapacity else { return try appendAlone(check, size: size, time: time) }
        run.start(check, size: size, time: time, seq: nextSeq)
        return run.seq
    }

    /// A check too long to keep (a long reason) is appended at once. No
    /// closure here: one capturing the check copied it (an outlined copy
    /// and destroy of its Strings per record).
    private func appendAlone(_ check: PolicyCheck, size: Int, time: Int64) throws -> UInt64 {
        let keys = RecordKeys(type: EventKind.policyChecked.rawValue, uid: check.uid, context: check.ctx)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        PolicyCheckedPayload.write(check, into: buffer)
        let seq = try log.append(time: time, keys: keys, payload: UnsafeRawBufferPointer(buffer))
        nextSeq = seq + 1
        return seq
    }

    /// The run becomes its record: policy-checked for one check, kind 33
    /// with its count and span for more.
    private func appendRun() throws {
        let (time, keys, payload, expected) = run.close()
        let seq = try log.append(time: time, keys: keys, payload: payload)
        // Nothing else appends to the daemon's log.
        assert(seq == expected, "a check run was given seq \(expected), the log appended it at \(seq)")
        nextSeq = seq + 1
    }

    func flush(durableThrough seq: UInt64) {
        if run.isOpen {
            do { try appendRun() } catch {
                // The log refuses records (it failed, which its onFailure
                // reported): the turn's end fails closed, as after a failed write.
                if failureFlag.value == nil { failureFlag.set("\(error)") }
            }
        }
        // A failed write calls the log's onFailure (FailureFlag) itself.
        if log.hasUnwritten { try? log.write() }
        if seq > log.durableSeq { log.commit(through: seq) }
    }

    var durableSeq: UInt64 { log.durableSeq }
    var lastSeq: UInt64 { run.isOpen ? run.seq : log.lastSeq }
    /// The open run (one record of < 100 bytes) is claimed when it is
    /// appended, at the latest by the turn's flush.
    var bytesClaimed: Int64 { log.bytesClaimed }
    var bytesClaimedWritten: Int64 { log.bytesClaimedWritten }
    var failure: String? { failureFlag.value }
}

/// Set by the log's sync thread when a write or fsync failed; read by the loop.
final class FailureFlag: Sendable {
    private let box = Mutex<String?>(nil)
    /// Set (with release ordering) after the message: every request asks,
    /// and a lock per request was two atomic read-modify-writes.
    private let isSet = Atomic<Bool>(false)
    var value: String? {
        guard isSet.load(ordering: .acquiring) else { return nil }
        return box.withLock { $0 }
    }
    func set(_ message: String) {
        box.withLock { $0 = message }
        isSet.store(true, ordering: .releasing)
    }
}
