// `verify` and `repair` (AUDIT.md, S-41): the log module does the checking
// and the cutting; these commands choose the directory, refuse to repair
// under a running daemon, supply the `log-repaired` record, and report.

import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check every record's checksum, the seqs, the hash chain and the snapshots"
    static let details = """
        Exit status 0 and a one-line summary when everything holds; 1 and the first
        bad record (segment, offset, seq, reason) when not. Read-only: safe on a
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
        guard File.exists(directory + "/log") else { throw CommandFailure("No event log in \(directory) (no \(directory)/log)") }
        let report: VerifyReport
        do throws(LogError) { report = try EventLog.verify(directory) } catch {
            throw CommandFailure(error.description)
        }
        if let corruption = report.corruption {
            let detail = corruption.detail.isEmpty || corruption.detail == corruption.reason.rawValue ? "" : " (\(corruption.detail))"
            Console.out("FAILED: first bad record: segment \(Self.segmentFile(corruption.segment)), offset \(corruption.offset), "
                + "seq \(corruption.seq): \(corruption.reason.rawValue)\(detail)")
            for problem in report.snapshotProblems { Console.out("FAILED: \(problem)") }
            Console.error("localauthctl: the log cannot be trusted after seq \(corruption.seq &- 1); "
                + "stop the daemon and run 'localauthctl repair' to cut it there (a copy of the cut is kept)")
            return 1
        }
        if let problem = report.snapshotProblems.first {
            Console.out("FAILED: \(problem)")
            for problem in report.snapshotProblems.dropFirst() { Console.out("FAILED: \(problem)") }
            Console.error("localauthctl: the log itself verifies; 'localauthctl repair' moves the bad snapshots aside")
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

    /// The segment's file name (FORMAT.md: its first seq in 16 hex digits).
    static func segmentFile(_ firstSeq: UInt64) -> String {
        let digits = String(firstSeq, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".seg"
    }
}
