// The one performer of the core's actions (ServerAction.swift), shared by
// the daemon's epoll shell (EventLoop), the simulator (SimulatedDaemon) and
// the test harnesses: each is a `ServerShell`, which does what one action
// says with its own sockets, workers and journal. The performer takes the
// core's actions in order (swapping buffers: the hot path allocates
// nothing), hands each to the shell, and feeds what the shell answers back
// to the core as its inputs (the count of a write, `connectionFailed` when
// the socket is gone, `passcodeCommitted` after the passcode store's write,
// `configurationRead` after a SIGHUP's read), until the core has none left. So the order in which actions meet the world, and
// how their answers come back, is written once.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem

/// What performs the core's actions: sockets, workers, lookups, the journal.
package protocol ServerShell: AnyObject {
    /// `.send`: connection N's socket is there to be written (a write
    /// follows at once); false: the core forgets N.
    func socketIsOpen(_ id: Connection.ID) -> Bool
    /// Writes what the socket takes of `bytes` without blocking: the count
    /// (0: it would block), or nil when the socket failed (the core then
    /// forgets the connection). Touches nothing of the core.
    func write(_ bytes: UnsafeRawBufferPointer, to id: Connection.ID) -> Int?
    /// The epoll interest of N's socket.
    func watch(_ id: Connection.ID, reading: Bool, writing: Bool)
    /// The core forgot N: its socket closes.
    func close(_ id: Connection.ID)
    /// sd_notify.
    func notify(_ state: String)
    func journal(_ entry: JournalEntry)
    /// A passcode check or hash for a worker; `passcodeJobsFinished` brings the result later.
    func runPasscodeJob(token: UInt64, _ job: PasscodeWorkers.Job)
    /// A right's key operation: nil when a worker took it (`keyJobsFinished`
    /// brings the result later), else its result now.
    func runKeyJob(token: UInt64, _ job: KeyJob) -> KeyCompletion?
    /// Stores (nil: removes) a user's passcode record, durably; the
    /// performer hands the core the answer (`passcodeCommitted`).
    func commitPasscode(_ record: String?, for uid: UserID) throws
    /// The right store's bytes to write durably: nil when a thread writes
    /// them (`rightsWritten` brings the answer later), else the answer now.
    func writeRights(_ write: RightsWrite) -> SystemError??
    /// The login secret's work: nil when its thread took it
    /// (`keyringAnswered` brings the answer later), else the answer now.
    func runKeyringJob(_ job: KeyringJob) -> KeyringAnswer?
    /// An AdminGroup lookup, off the loop; `adminLookupsAnswered` brings the answer later.
    func lookUpGroup(_ query: GroupQuery)
    /// A uid's passwd name (S-59): nil when a thread looks it up
    /// (`accountsLookedUp` brings the answer later), else the answer now.
    func lookUpAccount(_ query: AccountQuery) -> AccountAnswer?
    /// A real sensor backend's work (only a core given one asks); its
    /// reports reach the core as `sensorReported`.
    func sensor(_ command: SensorCommand)
    /// Reopens the failed log (`LogHealth.canReopen` says whether this shell can).
    func reopenLog() throws -> Authenticator
    /// Asks logind which session connection N's process belongs to (S-65);
    /// `sessionLookedUp` brings the answer later.
    func lookUpSession(_ id: Connection.ID, pid: ProcessID, uid: UserID)
    /// SIGHUP: the configuration files read again, or why not; nil: this
    /// shell has none to read (the core is told nothing).
    func readConfiguration() -> Result<DaemonConfiguration, any Error>?
    /// malloc_trim.
    func releaseFreePages()
    /// The LOCALAUTHD_TEST_HANG hook.
    func hang(seconds: UInt32)
}

/// `package`: the simulator's shell takes these defaults too.
package extension ServerShell {
    /// A shell that keeps no store on disk: written at once.
    func writeRights(_ write: RightsWrite) -> SystemError?? { .some(nil) }
    /// A shell without the keyring thread runs the job in place.
    func runKeyringJob(_ job: KeyringJob) -> KeyringAnswer? { job.run() }
    func sensor(_ command: SensorCommand) {}
    func reopenLog() throws -> Authenticator { throw CannotReopen() }
    /// A shell without key workers (the simulator, the core's harnesses) runs it in place.
    func runKeyJob(token: UInt64, _ job: KeyJob) -> KeyCompletion? { KeyCompletion(token: token, outcome: job.run()) }
    /// A shell without logind: the lookup expires as unavailable (PeerSessions).
    func lookUpSession(_ id: Connection.ID, pid: ProcessID, uid: UserID) {}
    func releaseFreePages() {}
    func hang(seconds: UInt32) {}
    /// A shell without a user database of its own (the simulator, the
    /// core's harnesses): no uid has a passwd entry, so no right's account changes.
    func lookUpAccount(_ query: AccountQuery) -> AccountAnswer? { .entry(nil) }
}

/// Drains the core's actions through a shell. A class: a shell may look at
/// what is still to be performed (`pending`) while it performs one.
package final class ActionPerformer {
    /// The batch being performed (swapped with the core's buffer), and the next action in it.
    private(set) var batch: [ServerAction] = []
    private(set) var next = 0

    package init() { batch.reserveCapacity(64) }

    /// Actions taken from the core and not performed yet.
    package var pending: ArraySlice<ServerAction> { batch[next...] }

    /// Performs the core's actions in order, until it has none (an answer
    /// fed back, `wrote`, may append more).
    package func perform<Shell: ServerShell>(_ core: ServerCore, through shell: Shell) {
        while true {
            if next == batch.count {
                batch.removeAll(keepingCapacity: true)
                next = 0
                core.takeActions(into: &batch)
                if batch.isEmpty { return }
            }
            let action = batch[next]
            next += 1
            perform(action, core, shell)
        }
    }

    @inline(__always)
    private func perform<Shell: ServerShell>(_ action: ServerAction, _ core: ServerCore, _ shell: Shell) {
        switch action {
        case .send(let id):
            guard shell.socketIsOpen(id) else { return core.connectionFailed(id) }
            core.writeOutput(id) { shell.write($0, to: id) }
        case .watch(let id, let reading, let writing):
            shell.watch(id, reading: reading, writing: writing)
        case .close(let id):
            shell.close(id)
        case .notify(let state):
            shell.notify(state)
        case .journal(let entry):
            shell.journal(entry)
        case .runPasscodeJob(let token, let job):
            shell.runPasscodeJob(token: token, job)
        case .runKeyJob(let token, let job):
            if let done = shell.runKeyJob(token: token, job) { core.keyJobsFinished([done]) }
        case .commitPasscode(let uid, let record):
            do {
                try shell.commitPasscode(record, for: uid)
                core.passcodeCommitted(.success(()))
            } catch {
                core.passcodeCommitted(.failure(error))
            }
        case .writeRights(let write):
            if let answer = shell.writeRights(write) { core.rightsWritten(write.token, failure: answer) }
        case .keyring(let job):
            if let answer = shell.runKeyringJob(job) { core.keyringAnswered([(job, answer)]) }
        case .lookUpGroup(let query):
            shell.lookUpGroup(query)
        case .lookUpAccount(let query):
            if let answer = shell.lookUpAccount(query) { core.accountsLookedUp([(query, answer)]) }
        case .sensor(let command):
            shell.sensor(command)
        case .reopenLog:
            core.logReopened(Result { try shell.reopenLog() })
        case .lookUpSession(let id, let pid, let uid):
            shell.lookUpSession(id, pid: pid, uid: uid)
        case .readConfiguration:
            if let read = shell.readConfiguration() { core.configurationRead(read) }
        case .releaseFreePages:
            shell.releaseFreePages()
        case .hang(let seconds):
            shell.hang(seconds: seconds)
        }
    }
}

/// A shell that cannot reopen the log (its core never asks).
package struct CannotReopen: Error {
    package init() {}
}
