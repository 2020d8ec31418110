// Drives ServerCore as its shell does, with no socket, no file, no thread
// and no clock: a fake recorder whose durable seq the test moves, the
// simulator's passcode backend (SimulatedPasscodes, the one fake backend),
// a clock the test advances, and an action performer that keeps each
// connection's written bytes. Passcode jobs wait until the test
// runs them (`runJobs`), as a worker would later.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem
@testable import LocalAuthServer
@testable import LocalAuthSimulation

/// The log, in memory: appends count seqs; durability is the test's move.
final class FakeRecorder: EventRecorder {
    private(set) var events: [Event] = []
    private(set) var lastSeq: UInt64 = 0
    /// Moved by the test ("the log is durable through S").
    var durableSeq: UInt64 = 0
    /// Set by the test: the log refuses events.
    var failure: String?
    /// Whether every flush makes all durable at once (most tests).
    var syncsAtOnce = true

    func record(_ event: Event) throws -> UInt64 {
        if let failure { throw FakeFailure(description: failure) }
        events.append(event)
        lastSeq += 1
        return lastSeq
    }

    func record(_ check: PolicyCheck, time: Int64) throws -> UInt64 {
        try record(Event(time: time, check.event))
    }

    func flush(durableThrough seq: UInt64) {
        if syncsAtOnce, failure == nil { durableSeq = max(durableSeq, min(seq, lastSeq)) }
    }

    struct FakeFailure: Error, CustomStringConvertible { var description: String }
}

final class CoreHarness {
    let recorder = FakeRecorder()
    let passcodes = SimulatedPasscodes()
    let core: ServerCore
    /// Bytes each connection's peer has received (what `.send` wrote).
    var received: [Connection.ID: [UInt8]] = [:]
    var closed: Set<Connection.ID> = []
    /// `.send` actions performed.
    var sends = 0
    var journal: [JournalEntry] = []
    var jobs: [(token: UInt64, job: PasscodeWorkers.Job)] = []
    /// AdminGroup lookups asked for (`.lookUpGroup`), unanswered until the test answers.
    var lookups: [GroupQuery] = []
    /// logind's sessions as the test sets them (pid -> session, user, remote),
    /// and the session lookups asked for (`.lookUpSession`).
    var sessions: [ProcessID: (id: String, uid: UserID)] = [:]
    var sessionLookups: [(id: Connection.ID, pid: ProcessID)] = []
    /// Answer session lookups at once from `sessions` (else the test answers them).
    var answersSessionsAtOnce = true
    /// How many bytes a `.send` may write (nil: all; 0: the peer does not read).
    var socketRoom: Int?
    /// CLOCK_MONOTONIC, ns.
    var monotonic: UInt64 = 1_000_000_000
    let performer = ActionPerformer()
    /// Called as the shell writes the passcode store (the core waits for its answer).
    var onCommit: (() -> Void)?
    /// The shell's reopen of a failed log (nil: it cannot, the core never asks).
    var reopen: (() throws -> Authenticator)? {
        didSet { core.logHealth.canReopen = reopen != nil }
    }
    /// Reopens asked for.
    var reopens = 0

    init(_ configure: (inout DaemonConfiguration) -> Void = { _ in }) {
        var configuration = DaemonConfiguration()
        configure(&configuration)
        let authenticator = Authenticator(state: AuthState(), recorder: recorder)
        core = ServerCore(configuration: configuration, authenticator: authenticator, passcodes: passcodes,
                          version: "test", daemonUID: 0)
        turn()
    }

    /// The shell's timer, armed for the core's next deadline: fires (and
    /// returns true) only when that deadline has come.
    @discardableResult
    func timer() -> Bool {
        guard let deadline = core.nextDeadline(), deadline <= monotonic else { return false }
        core.timerFired()
        return true
    }

    /// A new loop turn, `advance` ns after the last.
    func turn(advance: UInt64 = 1_000_000) {
        monotonic += advance
        let micros = Int64(monotonic / 1000)
        core.beginTurn(TurnTime(wall: 1_700_000_000_000_000 + micros, boot: micros, monotonic: monotonic))
    }

    func open(uid: UserID, pid: ProcessID = 1) -> Connection.ID? {
        let admission = core.connectionOpened(peer: PeerCredentials(pid: pid, uid: uid, gid: uid))
        perform()
        guard case .accepted(let id) = admission else { return nil }
        return id
    }

    /// Bytes as one read, then (unless `endTurn` is false) the turn's end.
    func feed(_ text: String, on id: Connection.ID, endTurn: Bool = true) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeBytes { _ = core.received($0, on: id) }
        perform()
        if endTurn { endOfTurn() }
        bytes.removeAll()
    }

    /// The same bytes, one `received` call per byte.
    func feedByteByByte(_ text: String, on id: Connection.ID) {
        for byte in text.utf8 {
            withUnsafeBytes(of: byte) { _ = core.received($0, on: id) }
            perform()
        }
        endOfTurn()
    }

    func endOfTurn() {
        core.endOfTurn()
        perform()
    }

    /// Performs the core's actions as the shell does (the shared
    /// ActionPerformer, this harness as its shell), until none is left.
    func perform() { performer.perform(core, through: self) }

    /// Runs the waiting passcode jobs, as the workers would, and hands
    /// their results to the core in a later turn.
    func runJobs() {
        let waiting = jobs
        jobs.removeAll()
        var completions: [PasscodeWorkers.Completion] = []
        for (token, job) in waiting {
            var completion = PasscodeWorkers.Completion(token: token, correct: false, hash: nil, fingerprint: [])
            switch job {
            case .verify(let secret, let check):
                let bytes = secret.copy()
                completion.correct = check(bytes)
                completion.fingerprint = SHA256.hash(bytes)
            case .verifySealing(let secret, let check):
                let bytes = secret.copy()
                completion.correct = check(bytes).correct
                completion.fingerprint = SHA256.hash(bytes)
            case .record(let secret, let make):
                completion.hash = try? make(secret.copy())
                completion.correct = completion.hash != nil
            }
            completions.append(completion)
        }
        turn()
        core.passcodeJobsFinished(completions)
        perform()
        endOfTurn()
    }

    /// The lines connection N's peer has received.
    func lines(_ id: Connection.ID) -> [String] {
        String(decoding: received[id] ?? [], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The last line with this tag, if any.
    func reply(_ tag: String, on id: Connection.ID) -> String? {
        lines(id).last { $0.hasPrefix(tag + " ") }
    }

    /// `n new` on N: the context id.
    func newContext(on id: Connection.ID, tag: String = "n") -> String? {
        feed("\(tag) new\n", on: id)
        guard let line = reply(tag, on: id), let word = line.split(separator: " ").first(where: { $0.hasPrefix("ctx=") })
        else { return nil }
        return String(word.dropFirst(4))
    }
}

/// The harness as the core's shell: each connection's peer receives what
/// the socket takes (`socketRoom`), jobs and lookups wait for the test.
extension CoreHarness: ServerShell {
    func socketIsOpen(_ id: Connection.ID) -> Bool {
        sends += 1
        return true
    }

    func write(_ bytes: UnsafeRawBufferPointer, to id: Connection.ID) -> Int? {
        let count = min(bytes.count, socketRoom ?? bytes.count)
        received[id, default: []].append(contentsOf: bytes.prefix(count))
        return count
    }

    func watch(_ id: Connection.ID, reading: Bool, writing: Bool) {}
    func close(_ id: Connection.ID) { closed.insert(id) }
    func notify(_ state: String) {}
    func journal(_ entry: JournalEntry) { journal.append(entry) }
    func runPasscodeJob(token: UInt64, _ job: PasscodeWorkers.Job) { jobs.append((token, job)) }
    func reopenLog() throws -> Authenticator {
        reopens += 1
        guard let reopen else { throw CannotReopen() }
        return try reopen()
    }

    func commitPasscode(_ record: String?, for uid: UserID) throws {
        onCommit?()
        try passcodes.commit(record, for: uid)
    }
    func lookUpGroup(_ query: GroupQuery) { lookups.append(query) }
    /// logind as `sessions` says, pidfs inode 70000 + pid (S-65).
    func lookUpSession(_ id: Connection.ID, pid: ProcessID, uid: UserID) {
        sessionLookups.append((id, pid))
        if answersSessionsAtOnce { answerSession(id, pid: pid) }
    }
    func answerSession(_ id: Connection.ID, pid: ProcessID, _ override: PeerSession.Session? = nil) {
        let session = override ?? sessions[pid].map { .session(id: $0.id, uid: $0.uid, remote: false, remoteHost: "") } ?? PeerSession.Session.none
        core.sessionLookedUp(id, PeerSession(session: session, process: UInt64(70_000 + Int(pid))))
    }
    func readConfiguration() -> Result<DaemonConfiguration, any Error>? { nil }
}
