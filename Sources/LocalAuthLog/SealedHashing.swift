// The daemon's open checks each sealed segment by one SHA-256 pass over its
// records (FORMAT.md "Seals", step 2; S-49: a changed byte anywhere stops the
// start). That pass is the start's largest cost (~0.4 s of CPU for 640 MB
// with SHA-NI) and one segment's stream does not depend on another's (each
// starts from its own header's "chain before"), so the passes run on every
// CPU the process may use at once. Only the hashing moves: the reader still
// takes the results in segment order and checks every header, seam and seal
// exactly as a sequential open does, so what is refused is unchanged.

import Glibc
import LocalAuthSystem

/// What one pass over a sealed segment's file found: its header bytes, and
/// (when the header decodes) its length and the chain head after its records.
struct SealedSegmentProbe: Sendable {
    var headerBytes: [UInt8]
    var header: SegmentHeader?
    var length = 0
    var head = ChainHead.zero

    /// Reads the header of the segment at `path` and, if it decodes, hashes
    /// its records from the header's "chain before" (SegmentSeal.chainHead).
    static func run(_ storage: any Storage, _ path: String) throws(SystemError) -> SealedSegmentProbe {
        let file = try SegmentFile.open(storage, path, .readOnly)
        defer { file.close() }
        let bytes = try file.bytes(count: SegmentHeader.size, at: 0)
        var probe = SealedSegmentProbe(headerBytes: bytes, header: bytes.withUnsafeBytes { SegmentHeader.decode($0) })
        if let header = probe.header {
            (probe.length, probe.head) = try SegmentSeal.chainHead(file, before: header.chainBefore)
        }
        return probe
    }
}

/// The probes of a list of sealed segments, computed by `workers` threads:
/// `workers - 1` started here and the caller's, which works while it waits
/// (`result(_:)`). `stop()` (the reader's deinit) ends and joins them.
final class SealedHashing: @unchecked Sendable {
    private struct State {
        var next = 0
        var results: [Result<SealedSegmentProbe, SystemError>?]
        var stopped = false
    }

    private let storage: any Storage
    private let paths: [String]
    private let lock: ConditionLock<State>
    private var threads: [pthread_t] = []

    /// `paths`: the segment files in the order they will be asked for.
    init(storage: any Storage, paths: [String], workers: Int) {
        self.storage = storage
        self.paths = paths
        lock = ConditionLock(State(results: Array(repeating: nil, count: paths.count)), conditions: 1)
        for _ in 1..<max(1, min(workers, paths.count)) {
            var handle = pthread_t()
            let started = pthread_create(&handle, nil, { argument in
                let hashing = Unmanaged<SealedHashing>.fromOpaque(argument!).takeRetainedValue()
                hashing.work(helping: nil)
                return nil
            }, Unmanaged.passRetained(self).toOpaque())
            // Without a thread the caller hashes the rest itself: slower, same result.
            if started == 0 { threads.append(handle) } else { Unmanaged.passUnretained(self).release() }
        }
    }

    /// The probe of `paths[index]`; hashes other segments while it is not ready.
    func result(_ index: Int) -> Result<SealedSegmentProbe, SystemError> {
        work(helping: index)
        return lock.withLock { lock.state.results[index]! }
    }

    /// Stops handing out segments and joins the threads (each finishes the one it hashes).
    func stop() {
        lock.withLock { lock.state.stopped = true }
        for thread in threads { pthread_join(thread, nil) }
        threads = []
    }

    /// Takes the next segment not yet started until none is left (or, for
    /// the caller, until `helping`'s result is in).
    private func work(helping wanted: Int?) {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let wanted, lock.state.results[wanted] != nil { return }
            if lock.state.stopped && wanted == nil { return }
            guard lock.state.next < paths.count else {
                if wanted == nil { return }
                lock.wait(0)  // another thread is hashing the wanted segment
                continue
            }
            let index = lock.state.next
            lock.state.next += 1
            lock.unlock()
            let outcome: Result<SealedSegmentProbe, SystemError>
            do throws(SystemError) { outcome = .success(try SealedSegmentProbe.run(storage, paths[index])) } catch {
                outcome = .failure(error)
            }
            lock.lock()
            lock.state.results[index] = outcome
            lock.broadcast(0)
        }
    }
}
