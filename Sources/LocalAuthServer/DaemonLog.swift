// The daemon's own diagnostics: structured journal entries when stderr is
// connected to journald, plain "localauthd: ..." lines on stderr otherwise.
// Never given a secret: callers pass ids, uids and counts only (S-39).
// Each notable audit event carries a MESSAGE_ID (catalog:
// systemd/localauthd.catalog) and the fields LOCALAUTH_UID,
// LOCALAUTH_CONTEXT and LOCALAUTH_SEQ where they apply, so that
// `journalctl MESSAGE_ID=... LOCALAUTH_UID=1000` finds them.
//
// The authentication trail (each evaluation's end, lockouts, backoff, admin
// actions) goes out with SYSLOG_FACILITY=10 (authpriv), so rsyslog puts it
// in /var/log/auth.log and journal forwarding carries it off the machine;
// the daemon's own life (started, stopped, the log's health, plain
// diagnostics) with SYSLOG_FACILITY=3 (daemon).
//
// Also home of the daemon's one test hook: with LOCALAUTHD_TEST_HANG=N
// (1...3600) in its environment, SIGUSR2 makes the event loop sleep N
// seconds, so a test can prove that a hung loop stops the WATCHDOG=1 pings.
// Without the variable SIGUSR2 is ignored.
import Glibc
import LocalAuthConfig
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

package enum DaemonLog {
    /// syslog priorities, without warning (4): journald rate-limits a
    /// service per priority pool, and warning is the log anchors' own pool
    /// (JournalAnchors.priority, S-58), which nothing else the daemon
    /// journals may spend. Problems are errors; the rest notice or info.
    package enum Priority: Int, Sendable { case error = 3, notice = 5, info = 6, debug = 7 }

    /// MESSAGE_IDs of notable audit events (catalog in systemd/).
    package enum MessageID: String, Sendable {
        case started = "8d4e1c3a5b6f47e2a1c09d7e3f2b4a61"
        case stopped = "2f7a9c1e4b3d48a6b5e0c8d1f9a27e34"
        case lockoutEngaged = "c41e7a2b9d3f4e08a6b1c5d2e7f90a13"
        case lockoutLifted = "5b9e2d7c1a4f4638b0e3d6a9c2f71e85"
        case passcodeBackoff = "e3a1c7d94b2f45e6a8d0b3c5f1e97a24"
        case adminReset = "7c2d9e4a1b6f4a83b5e1d0c8a3f62e97"
        case logRepaired = "a9f3e1c5d7b24e6a8c0b4d2f1e7a3c58"
        case corruptionFound = "1e7b3c9d5a2f4c8e9b6a0d3e7c1f5a42"
        /// S-49: the log's head at a start, stop or snapshot. Sent by
        /// `JournalAnchors` (LocalAuthLog/LogAnchor.swift) as `Anchors.messageID`,
        /// which must stay this value: the daemon reads these entries back.
        case logHead = "3c6d8f1a2e4b4f79a5d0c2e8b7f1a964"
        /// S-49: the log's head cannot be anchored or compared (no journal).
        case anchorUnavailable = "b72e5d1c8a3f4e96b0d4c7a2e9f15b38"
        /// S-49: started on a log behind its anchor (--accept-log-rollback).
        case rollbackAccepted = "d5a8c3e1f7b24a69c0e6b3d9a1f47c25"
        case evaluationSucceeded = "b7e2c4a9d1f34e6a8c5b0d9e3f7a1c26"
        case evaluationFailed = "d3f8a1c6e9b24d7a8e0c5b1f6a2d9e47"
        /// Enrollment changed, passcode set or removed, device unlocked.
        case accountChanged = "f1a6d3c8b2e94f7a9d0c4e8b5a3f6d12"

        /// syslog's facility: 10 (authpriv) for the authentication trail, 3 (daemon) for the rest.
        var facility: Int {
            switch self {
            case .started, .stopped, .logRepaired, .corruptionFound, .logHead, .anchorUnavailable, .rollbackAccepted: return 3
            case .lockoutEngaged, .lockoutLifted, .passcodeBackoff, .adminReset, .evaluationSucceeded,
                 .evaluationFailed, .accountChanged: return 10
            }
        }
    }

    static let underJournal = Journal.isConnectedToJournal

    static func write(_ priority: Priority, _ message: String, id: MessageID? = nil, fields: [(String, String)] = []) {
        if underJournal {
            var all: [(String, String)] = [("MESSAGE", message), ("PRIORITY", String(priority.rawValue)),
                                           ("SYSLOG_IDENTIFIER", "localauthd"),
                                           ("SYSLOG_FACILITY", String(id?.facility ?? 3))]
            if let id { all.append(("MESSAGE_ID", id.rawValue)) }
            all.append(contentsOf: fields)
            if Journal.send(fields: all) { return }
        }
        var line = "localauthd: \(message)"
        for (key, value) in fields { line += " \(key)=\(value)" }
        line += "\n"
        _ = try? FileDescriptor.standardError.writeAll(Array(line.utf8))
    }

    static func error(_ message: String, id: MessageID? = nil, fields: [(String, String)] = []) {
        write(.error, message, id: id, fields: fields)
    }

    /// A configuration that is valid but probably not what was meant (an
    /// error: not the anchors' warning pool, S-58).
    static func warnAboutConfiguration(_ configuration: DaemonConfiguration) {
        if let group = configuration.daemon.adminGroup, !group.isEmpty,
           (try? Accounts.groupID(named: group)) == nil {
            error("AdminGroup=\(group) names no group on this system: only root and the daemon's own user are administrators.")
        }
        if let group = configuration.daemon.auditGroup, !group.isEmpty,
           (try? Accounts.groupID(named: group)) == nil {
            error("AuditGroup=\(group) names no group on this system: nobody reads the event log through it.")
        }
        if configuration.daemon.insecureTestBackendsForPAM {
            error("InsecureTestBackendsForPAM=yes: PAM may authenticate on the simulated sensor or builtin passcodes, "
                + "which administrators control (S-52). For tests only; never on a machine with users.")
        }
    }

    static func notice(_ message: String, id: MessageID? = nil, fields: [(String, String)] = []) {
        write(.notice, message, id: id, fields: fields)
    }

    static func info(_ message: String, id: MessageID? = nil, fields: [(String, String)] = []) {
        write(.info, message, id: id, fields: fields)
    }

    /// At start: when the newest record is `log-repaired` (written by
    /// `localauthctl repair` while the daemon was stopped), its journal entry.
    static func repairReport(_ log: EventLog, lastSeq: UInt64) -> JournalEntry? {
        guard lastSeq > 0, let reader = try? log.reader(from: lastSeq), case .record(let record) = reader.next(),
              record.keys.type == EventKind.logRepaired.rawValue,
              case .logRepaired(let firstLostSeq, let by)? = try? EventCodec.decode(kind: record.keys.type, payload: record.payload)
        else { return nil }
        return JournalEntry(.notice, "The event log was repaired by uid \(by): events from seq \(firstLostSeq) on were lost; "
               + "every user must use the passcode before biometry.",
               id: .logRepaired, fields: [("LOCALAUTH_UID", String(by)), ("LOCALAUTH_SEQ", String(record.seq))])
    }

    /// The test hook's hang, in seconds; nil (hook off) unless
    /// LOCALAUTHD_TEST_HANG is set to 1...3600.
    static func testHangSeconds() -> UInt32? {
        guard let value = getenv("LOCALAUTHD_TEST_HANG"), let seconds = UInt32(String(cString: value)),
              (1...3600).contains(seconds) else { return nil }
        return seconds
    }

    /// Blocks the calling thread (the event loop) for `seconds`.
    static func hangForTest(_ seconds: UInt32) {
        notice("Test hook: hanging the event loop for \(seconds) s (LOCALAUTHD_TEST_HANG).")
        _ = try? Systemd.notify("STATUS=Test hook: event loop hung for \(seconds) s")
        var left = seconds
        while left > 0 { left = sleep(left) }
    }
}
