// The production EventRecorder: events encoded by the core's EventCodec,
// appended to the LocalAuthLog with index keys, made durable by the log's
// group commit. The loop writes what it appended once per turn, before that
// turn's replies go out; the log's sync thread fdatasyncs what is asked for
// and wakes the event loop through an eventfd when more becomes durable, or
// when writing failed.
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

    init(log: EventLog, failure: FailureFlag) {
        self.log = log
        self.failureFlag = failure
    }

    deinit { payloadScratch.deallocate() }

    func record(_ event: Event) throws -> UInt64 {
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
        return try writer.bytes.withUnsafeBytes { payload throws(LogError) in
            try log.append(time: time, keys: keys, payload: payload)
        }
    }

    func record(_ check: PolicyCheck, time: Int64) throws -> UInt64 {
        let keys = RecordKeys(type: EventKind.policyChecked.rawValue, uid: check.uid, context: check.ctx)
        // No closure here: one capturing the check copied it (an outlined
        // copy and destroy of its Strings per record).
        let size = PolicyCheckedPayload.size(check)
        let buffer = size <= payloadScratch.count
            ? payloadScratch : UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { if buffer.baseAddress != payloadScratch.baseAddress { buffer.deallocate() } }
        PolicyCheckedPayload.write(check, into: buffer)
        return try log.append(time: time, keys: keys, payload: UnsafeRawBufferPointer(rebasing: buffer[..<size]))
    }

    func flush(durableThrough seq: UInt64) {
        // A failed write calls the log's onFailure (FailureFlag) itself.
        if log.hasUnwritten { try? log.write() }
        if seq > log.durableSeq { log.commit(through: seq) }
    }

    var durableSeq: UInt64 { log.durableSeq }
    var lastSeq: UInt64 { log.lastSeq }
    var bytesClaimed: Int64 { log.bytesClaimed }
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
