// `localauthctl repair` (daemon stopped): keep a copy of everything cut, cut
// the log after the last trustworthy record, and append the caller's
// `log-repaired` record (which locks every user out of biometry, S-41).
// Nothing wrong: nothing changes, and the report says so.

import Glibc
import LocalAuthSystem

public struct RepairReport: Sendable, Equatable, CustomStringConvertible {
    public var repaired = false
    public var message = ""
    /// The problem found (nil when the log was fine).
    public var problem: Corruption?
    /// The first seq that was dropped; the repair record has this seq.
    public var firstLostSeq: UInt64?
    /// Where the cut data was kept.
    public var keptIn: String?

    public var description: String { message }
}

extension EventLog {
    /// `makeRepairRecord(firstLostSeq)` builds the record appended after the cut.
    public static func repair(
        _ directory: String, time: Int64, storage: any Storage = DiskStorage.shared,
        makeRepairRecord: (_ firstLostSeq: UInt64) -> (keys: RecordKeys, payload: [UInt8])
    ) throws(LogError) -> RepairReport {
        try repair(directory, time: time, storage: storage) { firstLost, _ in [makeRepairRecord(firstLost)] }
    }

    /// `makeRepairRecords(firstLostSeq, log)` builds the records appended
    /// after the cut (the last one the repair record), reading the kept log
    /// if it needs to (the caller re-records facts the cut lost that another
    /// file still holds, such as the passcode store's, before the repair
    /// record folds them at their worst).
    public static func repair(
        _ directory: String, time: Int64, storage: any Storage = DiskStorage.shared, sync: SyncDriver = .threads,
        makeRepairRecords: (_ firstLostSeq: UInt64, _ kept: EventLog) -> [(keys: RecordKeys, payload: [UInt8])]
    ) throws(LogError) -> RepairReport {
        let verified = try verify(directory, storage: storage)
        var report = RepairReport()
        let logDirectory = directory + "/log"
        let store = SnapshotStore(directory: directory, storage: storage)
        let options = Options(storage: storage, sync: sync)
        guard let corruption = verified.corruption else {
            if verified.snapshotProblems.isEmpty && verified.sealProblems.isEmpty {
                report.message = "Nothing to repair: the log verifies (\(verified.records) records, last seq \(verified.lastSeq))"
                    + (verified.tornTail.map { "; \($0) is cut by the next open" } ?? "") + "."
                return report
            }
            do throws(SystemError) {
                let folder = try makeFolder(storage, directory, time: time)
                for problem in verified.snapshotProblems {
                    try storage.rename(store.snapshotDirectory + "/" + problem.file, to: folder + "/" + problem.file)
                }
                if !verified.snapshotProblems.isEmpty { try storage.syncDirectory(store.snapshotDirectory) }
                // A wrong seal is derived data: moved aside, the next open re-seals the segment.
                for problem in verified.sealProblems {
                    try storage.rename(logDirectory + "/" + problem.file, to: folder + "/" + problem.file)
                }
                if !verified.sealProblems.isEmpty { try storage.syncDirectory(logDirectory) }
                try storage.syncDirectory(folder)
                report.keptIn = folder
            } catch { throw .io(error) }
            report.repaired = true
            report.message = verified.sealProblems.isEmpty
                ? "Moved \(verified.snapshotProblems.count) bad snapshots to \(report.keptIn!); the log itself verifies."
                : "Moved \(verified.snapshotProblems.count) bad snapshots and \(verified.sealProblems.count) bad seals to "
                    + "\(report.keptIn!); the log itself verifies."
            // A snapshot beyond the log means recorded events were removed
            // (S-49): the repair record says so, and what they did is assumed
            // at its worst (every user locked out of biometry, S-41).
            if verified.snapshotProblems.contains(where: \.beyondLog) {
                let firstLost = verified.lastSeq + 1
                let log = try EventLog.open(directory, options: options)
                var seq: UInt64 = 0
                for (keys, payload) in makeRepairRecords(firstLost, log) { seq = try log.append(time: time, keys: keys, payload: payload) }
                try log.waitDurable(seq)
                try log.close()
                report.firstLostSeq = firstLost
                report.message += " A snapshot covered seqs the log no longer holds: events from seq \(firstLost) on were "
                    + "lost; appended the repair record as seq \(seq)."
            }
            return report
        }
        report.problem = corruption
        let firstLost = corruption.seq
        do throws(SystemError) {
            let folder = try makeFolder(storage, directory, time: time)
            report.keptIn = folder
            let segments = try storage.entries(logDirectory).compactMap { SegmentName.parse($0, suffix: SegmentName.segmentSuffix) }
            let damaged = logDirectory + "/" + SegmentName.fileName(corruption.segment)
            if corruption.offset >= SegmentHeader.size {
                try LogFiles.keepCopy(storage, of: damaged, from: corruption.offset, to: folder + "/" + SegmentName.fileName(corruption.segment) + ".cut")
                let file = try SegmentFile.open(storage, damaged, .writeOnly)
                defer { file.close() }
                try file.truncate(to: corruption.offset)
                try file.fsync()
            } else {
                try storage.rename(damaged, to: folder + "/" + SegmentName.fileName(corruption.segment))
            }
            for segment in segments where segment > corruption.segment {
                try storage.rename(logDirectory + "/" + SegmentName.fileName(segment), to: folder + "/" + SegmentName.fileName(segment))
            }
            // Seals of the cut and moved segments no longer describe anything in the log.
            for segment in segments where segment >= corruption.segment && storage.exists(SegmentSeal.path(logDirectory, segment)) {
                try storage.rename(SegmentSeal.path(logDirectory, segment), to: folder + "/" + SegmentSeal.fileName(segment))
            }
            for seq in try store.list() where seq >= firstLost {
                try storage.rename(store.path(seq), to: folder + "/" + SegmentName.hex(seq) + SnapshotStore.suffix)
            }
            // Bad snapshots before the cut go too (F-48): the repaired log verifies whole.
            for problem in verified.snapshotProblems where storage.exists(store.snapshotDirectory + "/" + problem.file) {
                try storage.rename(store.snapshotDirectory + "/" + problem.file, to: folder + "/" + problem.file)
            }
            try storage.syncDirectory(folder)
            try storage.syncDirectory(logDirectory)
            if storage.exists(store.snapshotDirectory) { try storage.syncDirectory(store.snapshotDirectory) }
        } catch { throw .io(error) }
        let log = try EventLog.open(directory, options: options)
        var seq: UInt64 = 0
        for (keys, payload) in makeRepairRecords(firstLost, log) { seq = try log.append(time: time, keys: keys, payload: payload) }
        try log.waitDurable(seq)
        try log.close()
        report.repaired = true
        report.firstLostSeq = firstLost
        report.message = "Repaired: \(corruption). Cut the log after seq \(firstLost - 1), kept what was cut in "
            + "\(report.keptIn!), appended the repair record as seq \(seq)."
        return report
    }

    private static func makeFolder(_ storage: any Storage, _ directory: String, time: Int64) throws(SystemError) -> String {
        var seconds = time_t(time / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let stamp = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
        let folder = LogFiles.unusedName(storage, directory + "/repair-" + stamp)
        try storage.createDirectory(folder, mode: 0o750)
        try storage.syncDirectory(directory)
        return folder
    }
}
