// S-48: a space reserve for security events. When the free space on the
// log's file system falls below `[Log] ReserveSpace=`, unprivileged users'
// requests that would record routine events (`new`, `set`, `can-evaluate`,
// `evaluate`) are answered `unavailable` with a message saying that the disk
// is nearly full; failures, the final answers of running evaluations,
// administrators and daemon starts and stops still record into the reserve,
// and snapshots (a shortcut for startup, never needed) are not written.
// So a flood never leaves the daemon unable to record a failure or to start.
//
// Judged by statvfs each tick (10 times a second), and at the end of a loop
// turn once `judgeEveryRecords` records were appended since the last look,
// never per request: without a user's budget (LogBudget.swift,
// UserEventRate=0) a fast pipelined flood can write megabytes between two
// ticks, so the count bounds what can land unjudged (records are at most a
// few KiB, S-48's caps) at one compare per turn.
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

extension Server {
    var logDirectory: String { configuration.daemon.stateDirectory + "/log" }

    /// Records that may be appended between two looks at the free space.
    static let judgeEveryRecords: UInt64 = 256

    /// End of a loop turn: look now if many records went in since the last look.
    func judgeSpaceReserveIfMuchWasAppended() {
        if authenticator.recorder.lastSeq &- limits.spaceJudgedAtSeq >= Server.judgeEveryRecords { judgeSpaceReserve() }
    }

    /// In the tick: is the log's file system below the reserve? A change
    /// is journaled once each way.
    func judgeSpaceReserve() {
        limits.spaceJudgedAtSeq = authenticator.recorder.lastSeq
        let reserve = Int64(configuration.log.reserveSpace)
        guard reserve > 0, let free = FreeSpace.available(at: logDirectory) else {
            if limits.spaceLow { limits.spaceLow = false }
            return
        }
        let low = free < reserve
        guard low != limits.spaceLow else { return }
        limits.spaceLow = low
        if low {
            DaemonLog.error("Less than ReserveSpace=\(reserve) bytes free for the event log (\(free) left): "
                + "refusing unprivileged users' routine requests; failures, administrators and starts still record.")
        } else {
            DaemonLog.notice("The event log's file system has \(free) bytes free again (ReserveSpace=\(reserve)): serving everyone.")
        }
    }
}
