// What the server core asks its shell to do, and what the shell tells it
// (issue #18 item 1; docs/ARCHITECTURE.md "The server core"). The core appends
// actions to `ServerCore.actions` while it handles an input; the shell's
// ActionPerformer drains them in order after every input call, so a `.send`
// queued in the middle of a pipelined read goes out before the next read.
// The buffer is swapped, never copied: the hot path allocates nothing.
import LocalAuthCore
import LocalAuthSystem

package enum ServerAction {
    /// Write connection N's unsent output: `ServerCore.writeOutput(N) { bytes in
    /// ... return written or nil }` (ActionPerformer.swift).
    case send(Connection.ID)
    /// The epoll interest of N's socket.
    case watch(Connection.ID, reading: Bool, writing: Bool)
    /// The core forgot N: remove its socket from epoll and close it.
    case close(Connection.ID)
    /// sd_notify.
    case notify(String)
    /// A journal entry (DaemonLog writes it; never a secret, S-39).
    case journal(JournalEntry)
    /// Run a passcode check or hash on a worker (`passcodeJobsFinished` brings the result).
    case runPasscodeJob(token: UInt64, PasscodeWorkers.Job)
    /// Run a right's key operation (S-81; `keyJobsFinished` brings the result).
    case runKeyJob(token: UInt64, KeyJob)
    /// Store (nil: remove) a user's passcode record, durably, before its
    /// event is recorded (`passcodeCommitted` brings the answer; commits are
    /// answered in the order they were asked for).
    case commitPasscode(uid: UserID, record: String?)
    /// Write the right store's bytes, off the loop (`rightsWritten` brings the answer).
    case writeRights(RightsWrite)
    /// The login secret's store written, or shadow lines read, off the
    /// loop, in order (`keyringAnswered` brings the answer; S-74..S-77).
    case keyring(KeyringJob)
    /// An AdminGroup membership lookup, off the loop (S-51; `adminLookupsAnswered`).
    case lookUpGroup(GroupQuery)
    /// A uid's passwd name, off the loop (S-59; `accountsLookedUp`).
    case lookUpAccount(AccountQuery)
    /// Reopen the failed log from disk and record a start, as a restart
    /// would (`logReopened` brings the new authenticator, or why not).
    case reopenLog
    /// Tell the real sensor backend (SensorPrompts.swift); it reports back
    /// as `sensorReported`.
    case sensor(SensorCommand)
    /// Which logind session connection N's process (SO_PEERCRED `pid`, of
    /// `uid`) is in, pinned by its pidfd, or, in none, its user's display
    /// session (S-65; `sessionLookedUp` brings the answer).
    case lookUpSession(Connection.ID, pid: ProcessID, uid: UserID)
    /// Read the configuration files again (SIGHUP; `configurationRead`).
    case readConfiguration
    /// Many contexts ended: hand free heap pages back to the kernel (malloc_trim).
    case releaseFreePages
    /// The LOCALAUTHD_TEST_HANG hook: block the loop for this long.
    case hang(seconds: UInt32)
}

/// One entry for the journal (or stderr): DaemonLog's priority, message,
/// MESSAGE_ID and structured fields.
package struct JournalEntry {
    package var priority: DaemonLog.Priority
    package var message: String
    package var id: DaemonLog.MessageID?
    package var fields: [(String, String)]

    package init(_ priority: DaemonLog.Priority, _ message: String, id: DaemonLog.MessageID? = nil, fields: [(String, String)] = []) {
        self.priority = priority
        self.message = message
        self.id = id
        self.fields = fields
    }

    /// LOCALAUTH_UID / LOCALAUTH_CONTEXT / LOCALAUTH_SEQ, those that apply.
    static func fields(uid: UserID?, context: ContextID?, seq: UInt64) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let uid { fields.append(("LOCALAUTH_UID", String(uid))) }
        if let context { fields.append(("LOCALAUTH_CONTEXT", context.hex)) }
        if seq > 0 { fields.append(("LOCALAUTH_SEQ", String(seq))) }
        return fields
    }
}

/// A loop turn's time, read by the shell once after epoll returns.
package struct TurnTime: Equatable {
    /// CLOCK_REALTIME and CLOCK_BOOTTIME in µs (DaemonClock makes `now` of them).
    var wall: Int64
    var boot: Int64
    /// CLOCK_MONOTONIC in ns: timeouts, intervals.
    var monotonic: UInt64

    package init(wall: Int64, boot: Int64, monotonic: UInt64) {
        self.wall = wall
        self.boot = boot
        self.monotonic = monotonic
    }
}

/// The signals the shell hands on.
package enum ServerSignal {
    /// SIGTERM, SIGINT: a clean stop (S-32).
    case stop
    /// SIGHUP: reload the configuration.
    case reload
    /// SIGUSR2: the test hook (LOCALAUTHD_TEST_HANG).
    case testHang
}

/// A new connection: let in, or refused with these bytes to write before closing.
package enum Admission: Equatable {
    case accepted(Connection.ID)
    case refused(bytes: [UInt8])
}

extension ServerCore {
    /// Hands the actions appended since the last call to the shell:
    /// `batch` (empty, its capacity kept) is swapped with the core's buffer.
    @inline(__always)
    package func takeActions(into batch: inout [ServerAction]) {
        swap(&batch, &actions)
    }

    /// Journals now (an entry that may reveal a failure goes through
    /// `journalAfterDurable` instead, S-40).
    func journal(_ priority: DaemonLog.Priority, _ message: String, id: DaemonLog.MessageID? = nil,
                 fields: [(String, String)] = []) {
        actions.append(.journal(JournalEntry(priority, message, id: id, fields: fields)))
    }

    /// The same, for tests and the simulator (allocates).
    package func takeActions() -> [ServerAction] {
        var batch: [ServerAction] = []
        swap(&batch, &actions)
        return batch
    }
}
