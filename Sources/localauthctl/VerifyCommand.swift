// `verify` and `repair` (AUDIT.md, S-41): the log module does the checking
// and the cutting; these commands choose the directory, refuse to repair
// under a running daemon, supply the `log-repaired` record, and report.

import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check every record's checksum, the seqs, the hash chain, the seals and the snapshots"
    static let details = """
        Exit status 0 and a one-line summary when everything holds; 1 and the first
        bad record (segment, offset, seq, reason), or each seal or snapshot that
        disagrees with the log (file, what differs), when not. Read-only: safe on a
        live state directory or a copy.
        """
    static let isLive = false
    static let options = [StateDirectoryOption.spec]

    var explicitDirectory: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        explicitDirectory = arguments.value(StateDirectoryOption.spec.key)
    }

    func run() throws(CommandFailure) -> Int32 {
        let directory = try StateDirectoryOption.directory(explicitDirectory)
        _ = try StateDirectoryOption.logDirectory(directory)
        let report: VerifyReport
        do throws(LogError) { report = try EventLog.verify(directory) } catch {
            throw CommandFailure(error.description)
        }
        if let corruption = report.corruption {
            let detail = corruption.detail.isEmpty || corruption.detail == corruption.reason.rawValue ? "" : " (\(corruption.detail))"
            // Seq 0: the reader failed before the first segment told it a seq.
            let place = corruption.seq == 0 ? "before seq 1" : "seq \(corruption.seq)"
            Console.out("FAILED: first bad record: segment \(SegmentName.fileName(corruption.segment)), offset \(corruption.offset), "
                + "\(place): \(corruption.reason.rawValue)\(detail)")
            for problem in report.snapshotProblems { Console.out("FAILED: \(problem)") }
            for problem in report.sealProblems { Console.out("FAILED: \(problem)") }
            let trusted = corruption.seq <= 1 ? "from its start" : "after seq \(corruption.seq - 1)"
            Console.error("localauthctl: the log cannot be trusted \(trusted); "
                + "stop the daemon and run 'localauthctl repair' to cut it there (a copy of the cut is kept)")
            return 1
        }
        let problems = report.sealProblems.map(\.description) + report.snapshotProblems.map(\.description)
        if !problems.isEmpty {
            for problem in problems { Console.out("FAILED: \(problem)") }
            let kinds = [report.sealProblems.isEmpty ? nil : "seals", report.snapshotProblems.isEmpty ? nil : "snapshots"]
            Console.error("localauthctl: the log itself verifies; 'localauthctl repair' (daemon stopped) moves the bad "
                + kinds.compactMap { $0 }.joined(separator: " and ") + " aside")
            return 1
        }
        Console.out("OK: \(report.records) records (seq 1...\(report.lastSeq)) in \(report.segments) segment\(report.segments == 1 ? "" : "s"), "
            + "hash chain intact (head \(report.chainHead.hex.prefix(16))…), "
            + (report.snapshotsChecked == 0 ? "no snapshots" : "\(report.snapshotsChecked) snapshots agree"))
        if let torn = report.tornTail {
            Console.error("localauthctl: note: \(torn); the daemon cuts it when it starts")
        }
        return 0
    }
}
