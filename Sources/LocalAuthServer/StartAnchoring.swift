// At start, before READY (S-49): is this log the one that was last anchored?
// A log behind its newest anchor (a state directory restored from an older
// copy, the last segment cut at a record boundary), one whose chain differs
// at the anchored seq (rewritten), or an empty log next to a passcode store
// that holds passcodes (`log/` emptied: no journal needed to see that; a
// passcode is only ever set by a daemon that recorded its start first) all
// stop the start and name the commands, unless the daemon was started with
// `--accept-log-rollback`: then the acceptance is recorded as a
// `log-rollback-accepted` event, which folds like a repair (every user
// locked out of biometry, passcode delays at the longest step).
//
// Without an anchor store (no journald, or a journal this uid cannot read)
// the start goes on and says, loudly, that nothing is anchored.
import Glibc
import LocalAuthCore
import LocalAuthLog

enum StartAnchoring {
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// Returns the command to run after `.start` (the recorded acceptance),
    /// or nil; throws `Refusal` when the log must not be used.
    static func check(_ log: EventLog, anchors: Result<AnchorStore, AnchorUnavailable>, passcodes: PasscodeBackend,
                      accept: Bool, journal: (JournalEntry) -> Void) throws -> Command? {
        let directory = log.directory
        let lastSeq = log.lastSeq
        var anchor: (LogAnchor, store: String)?
        switch anchors {
        case .failure(let why):
            journal(JournalEntry(.error, "The event log's head is not anchored: \(why). A rollback or truncation of \(directory) "
                + "cannot be detected (S-49).", id: .anchorUnavailable))
        case .success(let store):
            do throws(AnchorUnavailable) {
                if let newest = try store.newest(stateDirectory: directory) { anchor = (newest, store.name) }
            } catch {
                journal(JournalEntry(.error, "The event log's head cannot be compared with its anchors: \(error). A rollback or "
                    + "truncation of \(directory) cannot be detected (S-49).", id: .anchorUnavailable))
            }
        }
        // The builtin store only: it lives in the state directory and only the
        // daemon writes it (Backend=shadow reads the system's passwords).
        let stored = passcodes is BuiltinPasscodes ? passcodes.users.count : 0
        let evidence = RollbackEvidence.judge(log, storedPasscodes: stored, anchor: anchor)
        guard let evidence else {
            if accept { journal(JournalEntry(.notice, "--accept-log-rollback: the log is not behind its anchor; nothing to accept.")) }
            return nil
        }
        guard accept else {
            throw Refusal(description: "Refusing to start: \(evidence.what). Run 'localauthctl verify --journal' to compare; "
                + "to start on this log anyway (recorded, and every user must use the passcode first), "
                + "start once with 'localauthd --accept-log-rollback'.")
        }
        journal(JournalEntry(.error, "Accepting a rolled-back log (--accept-log-rollback): \(evidence.what).", id: .rollbackAccepted))
        return .acceptLogRollback(journalSeq: evidence.journalSeq, logSeq: lastSeq, by: getuid())
    }

    /// The head after the last durable record, to the anchor store.
    static func record(_ log: EventLog, anchors: AnchorStore?, event: String) {
        guard let anchors else { return }
        let seq = log.durableSeq
        guard let head = try? log.chainHead(at: seq) else { return }
        anchors.record(LogAnchor(seq: seq, chainHead: head), stateDirectory: log.directory, event: event)
    }
}
