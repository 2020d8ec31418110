// `verify` and `repair` (AUDIT.md, S-41, S-49): the log module does the
// checking and the cutting; these commands choose the directory, refuse to
// repair under a running daemon, supply the `log-repaired` record, and report.
// `verify --journal` also compares the log's head with the newest anchor the
// daemon wrote to the journal (LogAnchor.swift).

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
        disagrees with the log (file, what differs), when not. Every snapshot's
        SHA-256 is checked against its snapshot-recorded event and its state
        against the log replayed to its seq. --journal also compares the log's
        head with the newest one the daemon recorded in the journal (a log behind
        it was rolled back or cut). Whatever the flag, the log is judged as the
        daemon's start judges it: an emptied log beside a passcode store that
        holds passcodes fails. Read-only: safe on a live state directory or a copy.
        """
    static let isLive = false
    static let journalSpec = OptionSpec("--journal", help: "compare the log with the newest head recorded in the journal")
    static let options = [StateDirectoryOption.spec, journalSpec]

    var explicitDirectory: String?
    var journal: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        explicitDirectory = arguments.value(StateDirectoryOption.spec.key)
        journal = arguments.flag("--journal")
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
        if let undecodable = report.undecodable {
            Console.out("FAILED: \(undecodable)")
            Console.error("localauthctl: the daemon cannot replay this log; stop it and run 'localauthctl repair'")
            return 1
        }
        let problems = report.sealProblems.map(\.description) + report.snapshotProblems.map(\.description)
        if !problems.isEmpty {
            for problem in problems { Console.out("FAILED: \(problem)") }
            let kinds = [report.sealProblems.isEmpty ? nil : "seals", report.snapshotProblems.isEmpty ? nil : "snapshots"]
            Console.error("localauthctl: the log itself verifies; 'localauthctl repair' (daemon stopped) moves the bad "
                + kinds.compactMap { $0 }.joined(separator: " and ") + " aside"
                + (report.snapshotProblems.contains(where: \.beyondLog) ? " and records that events were lost" : ""))
            return 1
        }
        let anchored = judgeAsAtStart(directory)
        if case .failed(let message) = anchored {
            Console.out("FAILED: \(message)")
            Console.error("localauthctl: the log was rolled back, cut, emptied or rewritten since the daemon last recorded it; "
                + "the daemon refuses it unless started once with 'localauthd --accept-log-rollback'")
            return 1
        }
        Console.out("OK: \(report.records) records (seq 1...\(report.lastSeq)) in \(report.segments) segment\(report.segments == 1 ? "" : "s"), "
            + "hash chain intact (head \(report.chainHead.hex.prefix(16))…), "
            + (report.snapshotsChecked == 0 ? "no snapshots" : "\(report.snapshotsAgreeing) snapshots agree"))
        for note in report.snapshotNotes { Console.out("note: \(note)") }
        switch anchored {
        case .notAsked: Console.out("journal: not compared (--journal compares the head with the newest one recorded there)")
        case .note(let message): Console.out("journal: \(message)")
        case .holds(let message): Console.out("journal: \(message)")
        case .failed: break
        }
        if let torn = report.tornTail {
            Console.error("localauthctl: note: \(torn); the daemon cuts it when it starts")
        }
        return 0
    }

    enum Anchored { case notAsked, note(String), holds(String), failed(String) }

    /// The daemon's judgement at a start (S-49, RollbackEvidence), with the
    /// newest anchor of `directory` when `--journal` asks for it (written by
    /// the daemon, whose uid owns the state directory): an emptied log beside
    /// a builtin passcode store that holds passcodes fails without it.
    func judgeAsAtStart(_ directory: String) -> Anchored {
        let builtin = ((try? InstalledConfiguration.load())?.passcode.backend ?? .builtin) == .builtin
        var stored = 0
        if builtin {
            do { stored = try PasscodeStoreFile.read(directory).count } catch let error as SystemError where error.errno == EACCES {
                // An auditor (AuditGroup=) may read the log but not the store (0600):
                // a store that is there is not empty (only set passcodes are written).
                stored = File.exists(PasscodeStoreFile.path(directory)) ? 1 : 0
            } catch {
                return .failed("the passcode store cannot be read (\(error)); the daemon does not start on it")
            }
        }
        var anchor: (LogAnchor, store: String)?
        var note: Anchored = .notAsked
        if journal {
            switch readAnchor(directory) {
            case .success(let found): anchor = found
            case .failure(let why): note = why.anchored
            }
        }
        let log: EventLog
        do throws(LogError) { log = try EventLog.open(directory, options: .init(readOnly: true)) } catch {
            return .failed("the log cannot be opened to judge it as the daemon's start does: \(error)")
        }
        if let evidence = RollbackEvidence.judge(log, storedPasscodes: stored, anchor: anchor) { return .failed(evidence.what) }
        guard let (found, store) = anchor else { return note }
        return .holds("the log holds the head recorded in \(store) (\(found))")
    }

    /// The newest anchor of `directory`, or the note that says why there is none.
    func readAnchor(_ directory: String) -> Result<(LogAnchor, store: String), AnchorNote> {
        let uid = File.status(directory)?.uid ?? Accounts.currentUID()
        let store: AnchorStore
        switch Anchors.current(uid: uid) {
        case .failure(let why): return .failure(AnchorNote(.note("not compared: \(why); the log's head is not anchored")))
        case .success(let found): store = found
        }
        do throws(AnchorUnavailable) {
            guard let newest = try store.newest(stateDirectory: directory) else {
                return .failure(AnchorNote(.note("no head of \(Anchors.identity(directory)) recorded in \(store.name): nothing to compare")))
            }
            return .success((newest, store.name))
        } catch {
            return .failure(AnchorNote(.note("not compared: \(error)")))
        }
    }

    struct AnchorNote: Error {
        let anchored: Anchored
        init(_ anchored: Anchored) { self.anchored = anchored }
    }
}
