// S-48: a space reserve for security events. When the free space on the
// log's file system falls below `[Log] ReserveSpace=`, unprivileged users'
// requests that would record routine events (`new`, `set`, `can-evaluate`,
// `evaluate`) are answered `unavailable` with a message saying that the disk
// is nearly full; failures, the final answers of running evaluations,
// administrators and daemon starts and stops still record into the reserve,
// and snapshots (a shortcut for startup, never needed) are not written.
// So a flood never leaves the daemon unable to record a failure or to start.
//
// Judged at admission against an ESTIMATE (F-16): the free space statvfs gave
// at the last look minus the space the log claimed since (EventLog's
// `bytesClaimed`: preallocation steps and new segments as the log will write
// them, nothing for records landing in zeros already allocated). What a loop
// turn appends reaches the file, and statvfs, only at the turn's end, and one
// turn can read thousands of pipelined requests from hundreds of
// connections: a look per 100 ms, or even per request, would not see them.
// The estimate sees each record as it is appended, at one load and compare
// per admitted request. The looks (statvfs) correct it: at an admission when
// the last look is older than `lookEvery` (what others wrote meanwhile; an
// idle daemon looks at nothing, S-82), at `stats`, and at the end of a turn
// after `judgeEveryRecords` records; a look's base is the claim of what was
// on the file then (records appended but not written are still to come off
// the free space it saw).
import Glibc
import LocalAuthSystem

enum FreeSpace {
    /// Bytes an unprivileged writer may still use on the file system of
    /// `path` (f_bavail × f_frsize), or nil when statvfs fails.
    static func available(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}

/// The last look at the free space, for the estimate between looks.
struct SpaceLook {
    /// Free bytes then (nil: no reserve, or statvfs failed: nothing is refused for space).
    var free: Int64?
    /// The log's claim of what was on its file then (`bytesClaimedWritten`).
    var claimed: Int64 = 0
}

extension ServerCore {
    var logDirectory: String { configuration.daemon.stateDirectory + "/log" }

    /// Records that may be appended between two looks at the free space.
    static let judgeEveryRecords: UInt64 = 256
    /// A look older than this is taken again before it judges an admission.
    static let lookEvery: UInt64 = 100_000_000

    /// The last look, taken again if it is older than `lookEvery`.
    func lookAtSpaceIfStale() {
        if let at = limits.spaceLookedAt, turn.monotonic &- at < ServerCore.lookEvery { return }
        judgeSpaceReserve()
    }

    /// End of a loop turn: look now if many records went in since the last look.
    func judgeSpaceReserveIfMuchWasAppended() {
        if authenticator.recorder.lastSeq &- limits.spaceJudgedAtSeq >= ServerCore.judgeEveryRecords { judgeSpaceReserve() }
    }

    /// A look (a stale one at an admission, or after many records): the free space now, by statvfs.
    func judgeSpaceReserve() {
        limits.spaceJudgedAtSeq = authenticator.recorder.lastSeq
        limits.spaceLookedAt = turn.monotonic
        let reserve = Int64(configuration.log.reserveSpace)
        // The claim of what is on the file, read before statvfs: a byte
        // written in between is counted twice (refusing early), never missed.
        let claimed = authenticator.recorder.bytesClaimedWritten
        guard reserve > 0, let free = freeSpace(logDirectory) else {
            limits.spaceLook = SpaceLook()
            noteSpaceLow(false, free: nil, reserve: reserve)
            return
        }
        limits.spaceLook = SpaceLook(free: free, claimed: claimed)
        noteSpaceLow(free < reserve, free: free, reserve: reserve)
    }

    /// At admission of an unprivileged routine request: is the reserve
    /// reached, by the estimate? Sticks until the next look says otherwise.
    func reserveIsReached() -> Bool {
        lookAtSpaceIfStale()
        if limits.spaceLow { return true }
        guard let free = limits.spaceLook.free else { return false }
        // Clamped: a log reopened after a failure starts its count again.
        let estimate = free - max(0, authenticator.recorder.bytesClaimed - limits.spaceLook.claimed)
        let reserve = Int64(configuration.log.reserveSpace)
        guard estimate < reserve else { return false }
        noteSpaceLow(true, free: estimate, reserve: reserve)
        return true
    }

    /// A change is journaled once each way.
    private func noteSpaceLow(_ low: Bool, free: Int64?, reserve: Int64) {
        guard low != limits.spaceLow else { return }
        limits.spaceLow = low
        if low {
            journal(.error, "Less than ReserveSpace=\(reserve) bytes free for the event log (\(free ?? 0) left): "
                + "refusing unprivileged users' routine requests; failures, administrators and starts still record.")
        } else if let free {
            journal(.notice, "The event log's file system has \(free) bytes free again (ReserveSpace=\(reserve)): serving everyone.")
        }
    }
}
