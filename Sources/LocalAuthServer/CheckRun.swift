// Repeated identical checks recorded as one event with a count (S-48, event
// kind 33, LocalAuthCore's RepeatedChecks.swift). The recorder keeps the
// newest policy check's payload here instead of appending it at once; each
// following check whose payload is the same byte for byte (same uid,
// context, policy, biometry, result and reason) and whose time is not
// earlier is counted into it. Anything else that is recorded, and the turn's
// flush before any reply leaves, first appends the run as one record: a
// plain policy-checked for one check, `policy-checked-repeatedly` with the
// count and the time range for more. So the log's order stays the order in
// which things happened (nothing is recorded between a run's checks), every
// check that got a reply is on the log's file before that reply (the loop's
// write precedes its output), and a crash loses only checks never answered.
import Glibc
import LocalAuthCore
import LocalAuthLog

package struct CheckRun {
    /// The payload of the run's check (policy-checked's layout), room for
    /// kind 33's two varints after it.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: CheckRun.payloadCapacity + PolicyCheckedPayload.repetitionRoom, alignment: 8)
    /// The longest payload a run keeps (a check's reason is a short daemon
    /// message; a longer one is appended alone).
    package static let payloadCapacity = 256
    private let standAloneEvery: UInt64

    /// The seq the run's record will have: the log's last + 1 when it started.
    package private(set) var seq: UInt64 = 0
    /// Checks counted so far; 0: no run.
    private var count: UInt32 = 0
    private var size = 0
    private var first: Int64 = 0
    private var last: Int64 = 0
    // The fields, for the usual compare (a successful check's payload is
    // made of these alone).
    private var uid: UserID = 0
    private var ctx = ContextID(high: 0, low: 0)
    private var policy = Policy.biometrics
    private var biometry = BiometryType.none
    private var succeeded = false

    package init(standAloneEvery: UInt64) { self.standAloneEvery = standAloneEvery }

    package func deallocate() { buffer.deallocate() }

    package var isOpen: Bool { count > 0 }

    /// Starts a run with `check`, whose payload has `size` bytes (at most
    /// `payloadCapacity`), at `time`, to be appended at `seq`.
    @inline(__always)
    package mutating func start(_ check: borrowing PolicyCheck, size: Int, time: Int64, seq: UInt64) {
        PolicyCheckedPayload.write(check, into: buffer)
        self.size = size
        self.seq = seq
        count = 1
        first = time
        last = time
        uid = check.uid
        ctx = check.ctx
        policy = check.policy
        biometry = check.biometry
        succeeded = check.result == nil
    }

    /// Counts `check` into the run when its payload is the run's and its time
    /// is not earlier than the run's last (so the record's time, the last
    /// one, is the run's high-water mark, as its checks' fold would leave
    /// it). `scratch` (at least `payloadCapacity` bytes) holds a failed
    /// check's payload for the compare.
    @inline(__always)
    package mutating func takes(_ check: borrowing PolicyCheck, time: Int64, scratch: UnsafeMutableRawBufferPointer) -> Bool {
        // The context first: what differs between checks of different clients.
        guard check.ctx == ctx, check.policy == policy, check.uid == uid, check.biometry == biometry, time >= last,
              count < UInt32.max, standAloneEvery == 0 || seq % standAloneEvery != 0
        else { return false }
        // `result`, not `failure`: reading the Failure copied its strings.
        if check.result == nil {
            guard succeeded else { return false }
        } else {
            // The LAError's code and reason, compared as the log holds them.
            let size = PolicyCheckedPayload.size(check)
            guard !succeeded, size == self.size, size <= scratch.count else { return false }
            PolicyCheckedPayload.write(check, into: scratch)
            guard memcmp(scratch.baseAddress!, buffer.baseAddress!, size) == 0 else { return false }
        }
        count += 1
        last = time
        return true
    }

    /// Ends the run: the record to append (its time, keys and payload, valid
    /// until the next `start`) and the seq it was promised.
    @inline(__always)
    package mutating func close() -> (time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer, seq: UInt64) {
        let checks = count
        count = 0
        if checks == 1 {
            let keys = RecordKeys(type: EventKind.policyChecked.rawValue, uid: uid, context: ctx)
            return (last, keys, UnsafeRawBufferPointer(rebasing: buffer[..<size]), seq)
        }
        let total = PolicyCheckedPayload.writeRepetition(count: checks, span: last - first, after: size, in: buffer)
        let keys = RecordKeys(type: EventKind.policyCheckedRepeatedly.rawValue, uid: uid, context: ctx)
        return (last, keys, UnsafeRawBufferPointer(rebasing: buffer[..<total]), seq)
    }
}
