// The EventRecorder the simulated daemon records through: the real codec
// and framing, the simulated disk, the log's failure semantics (one failed
// write or fsync and it takes nothing more: fail closed), and the real
// CheckRun, as LogRecorder uses it: identical checks in a row are promised
// one seq and appended as one record (kind 33) before anything else and at
// the flush that precedes replies (S-48).
import LocalAuthCore
import LocalAuthLog
import LocalAuthServer

final class SimulatedRecorder: EventRecorder {
    let disk: SimulatedDisk
    /// Every record this process appended (the simulator's S-38 check
    /// decodes them).
    private(set) var appended: [UInt8] = []
    /// Records appended, not yet written (the daemon's memory).
    private var unwritten: [UInt8] = []
    private var unwrittenRecords: [(seq: UInt64, end: Int)] = []
    private(set) var lastSeq: UInt64
    /// The seq the daemon asked to be durable (the sync thread's work).
    private(set) var syncRequested: UInt64 = 0
    private(set) var failure: String?
    /// How many bytes of a torn write survive (the run's choice).
    var tornKeep: (Int) -> Int = { $0 / 2 }
    /// Told of every record appended (its body and seq), while the
    /// decision that made it runs: the S-40 oracle marks its streams there.
    var recorded: (EventBody, UInt64) -> Void = { _, _ in }
    /// Told when a write or fsync failed (before the daemon hears of it).
    var failed: () -> Void = {}

    /// The checks promised a seq and not appended yet (CheckRun.swift).
    private var run = CheckRun(standAloneEvery: 0)
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: CheckRun.payloadCapacity, alignment: 8)
    private(set) var repeatedChecks = 0

    init(disk: SimulatedDisk, lastSeq: UInt64) {
        self.disk = disk
        self.lastSeq = lastSeq
        fileAtOpen = disk.file.count
    }

    /// S-48's space estimate (SpaceReserve.swift): what the appended records
    /// will take, and what is on the file.
    private let fileAtOpen: Int
    var bytesClaimed: Int64 { Int64(fileAtOpen + appended.count + (run.isOpen ? CheckRun.payloadCapacity : 0)) }
    var bytesClaimedWritten: Int64 { Int64(disk.file.count) }

    deinit {
        run.deallocate()
        scratch.deallocate()
    }

    /// Checks are promised a seq that is not in `appended` yet: the live
    /// state is ahead of the bytes until the run is appended.
    var hasOpenRun: Bool { run.isOpen }

    func record(_ event: Event) throws -> UInt64 {
        if run.isOpen { try appendRun() }
        return try append(time: event.time, body: event.body)
    }

    func record(_ check: PolicyCheck, time: Int64) throws -> UInt64 {
        if let failure { throw Refused(description: failure) }
        if run.isOpen {
            if run.takes(check, time: time, scratch: scratch) {
                repeatedChecks += 1
                return run.seq
            }
            try appendRun()
        }
        let size = PolicyCheckedPayload.size(check)
        guard size <= CheckRun.payloadCapacity else { return try append(time: time, body: check.event) }
        run.start(check, size: size, time: time, seq: lastSeq + 1)
        lastSeq = run.seq
        recorded(check.event, run.seq)
        return run.seq
    }

    struct Refused: Error, CustomStringConvertible { var description: String }

    private func append(time: Int64, body: EventBody) throws -> UInt64 {
        if let failure { throw Refused(description: failure) }
        let seq = lastSeq + 1
        frame(seq: seq, time: time, keys: RecordKeys(type: body.kind.rawValue, uid: body.uid, context: body.ctx),
              payload: EventCodec.encode(body))
        lastSeq = seq
        recorded(body, seq)
        return seq
    }

    private func frame(seq: UInt64, time: Int64, keys: RecordKeys, payload: [UInt8]) {
        let start = unwritten.count
        RecordFraming.encode(seq: seq, time: time, keys: keys, payload: payload, into: &unwritten)
        appended.append(contentsOf: unwritten[start...])
        unwrittenRecords.append((seq, unwritten.count))
    }

    /// The run becomes its record, at the seq it promised.
    private func appendRun() throws {
        if let failure { throw Refused(description: failure) }
        let (time, keys, payload, seq) = run.close()
        frame(seq: seq, time: time, keys: keys, payload: Array(payload))
    }

    func flush(durableThrough seq: UInt64) {
        guard failure == nil else { return }
        if run.isOpen { try? appendRun() }
        if !unwritten.isEmpty {
            let bytes = unwritten
            let records = unwrittenRecords
            unwritten.removeAll()
            unwrittenRecords.removeAll()
            if let problem = disk.write(bytes, records: records, kept: tornKeep(bytes.count)) {
                failed()
                failure = problem
                return
            }
        }
        if seq > disk.syncedSeq { syncRequested = max(syncRequested, seq) }
    }

    /// The sync thread's turn: an fdatasync if one was asked for.
    func syncIfAsked() {
        guard failure == nil, syncRequested > disk.syncedSeq else { return }
        if let problem = disk.sync() {
            failed()
            failure = problem
        }
    }

    var wantsSync: Bool { failure == nil && syncRequested > disk.syncedSeq }

    var durableSeq: UInt64 { disk.syncedSeq }
}
