// The daemon as the simulator runs it: the real Authenticator (decide,
// record, fold) over the SimulatedRecorder, the real ReplyGate for every
// byte and journal line, requests through the real LineSplitter and
// RequestScanner, replies written by the real LineWriter. What it does not
// run yet is the epoll shell (Server): its dispatch, fail-closed answers and
// event-to-reply mapping are restated here in small (docs/ARCHITECTURE.md,
// "Deterministic simulation"). No clock, no socket, no thread: the run calls
// each step, and an oracle (`Oracle`) watches what leaves.
import LocalAuthCore
import LocalAuthProtocol
@testable import LocalAuthServer

/// A journal line and the newest failure it may reveal (the S-40 oracle).
struct JournalLine {
    var text: String
    var reveals: UInt64
}

final class SimConnection {
    enum State { case open, closing, closed }

    let id: UInt64
    let uid: UserID
    let isAdmin: Bool
    var splitter = LineSplitter()
    var output: [UInt8] = []
    /// Every chunk queued (in `output` or held by the gate), in order, with
    /// the newest failure seq it may reveal: the S-40 oracle's view.
    var chunks: [(count: Int, reveals: UInt64)] = []
    var contexts: [ContextID] = []
    var evaluationTags: [ContextID: String] = [:]
    var state = State.open
    /// The log failed while output for it was held: that output was dropped
    /// and the connection is closed after `* ERR` and `* BYE` (its request
    /// stream is broken; S-33 answers per tag are not owed then).
    var lostReplies = false

    init(id: UInt64, uid: UserID, isAdmin: Bool) {
        self.id = id
        self.uid = uid
        self.isAdmin = isAdmin
    }
}

/// A passcode check waiting for (or on) the simulated worker.
struct PasscodeJob {
    var uid: UserID
    var ctx: ContextID
    var eval: EvaluationID
    var correct: Bool
    var admitted = false
}

final class SimulatedDaemon {
    var authenticator: Authenticator
    let recorder: SimulatedRecorder
    var gate = ReplyGate<JournalLine>()
    var connections: [UInt64: SimConnection] = [:]
    /// Why the log failed (fail closed), or nil.
    var failed: String?
    var jobs: [PasscodeJob] = []
    /// The newest failure (biometric no match, wrong passcode) recorded:
    /// the oracle's own reading of S-40, not the Authenticator's barrier.
    var newestFailure: UInt64 = 0
    /// Journal lines written, with the durable seq at that moment.
    var journal: [String] = []
    let oracle: Oracle
    var now: Int64
    var random: () -> UInt64

    init(state: AuthState, disk: SimulatedDisk, lastSeq: UInt64, now: Int64, oracle: Oracle, random: @escaping () -> UInt64) {
        recorder = SimulatedRecorder(disk: disk, lastSeq: lastSeq)
        authenticator = Authenticator(state: state, recorder: recorder)
        self.now = now
        self.oracle = oracle
        self.random = random
    }

    // MARK: - Running commands

    @discardableResult
    func run(_ command: Command) -> Authenticator.Outcome {
        let before = authenticator.state
        let outcome = authenticator.execute(command, now: now)
        let events: [Event]
        switch outcome {
        case .events(let decided), .answered(let decided, _): events = decided
        case .rejected, .unavailable: return outcome
        }
        let first = recorder.lastSeq &- UInt64(events.count) &+ 1
        for (offset, event) in events.enumerated() {
            let seq = first &+ UInt64(offset)
            oracle.recorded(event, seq: seq, before: before, now: now)
            switch event.body {
            case .biometricFailed, .passcodeRejected: newestFailure = seq
            default: break
            }
            deliver(event)
        }
        return outcome
    }

    /// What an event tells its evaluation's owner (PROMPT, final answer) and the journal.
    private func deliver(_ event: Event) {
        switch event.body {
        case .promptShown(_, let ctx, _, let prompt):
            guard let (connection, tag) = owner(ctx) else { return }
            var line = LineWriter()
            line.beginResponse(tag: tag, status: .prompt)
            line.append(key: "kind", value: prompt.kind.rawValue)
            if prompt.kind == .passcode { line.append(key: "attempts-left", value: prompt.attemptsLeft) }
            line.endLine()
            send(line.bytes, to: connection)
        case .evaluationSucceeded(let uid, let ctx, _, let method):
            writeJournal("Authentication succeeded for uid \(uid) (\(method.rawValue)).")
            guard let (connection, tag) = owner(ctx) else { return }
            connection.evaluationTags[ctx] = nil
            var line = LineWriter()
            line.beginResponse(tag: tag, status: .ok)
            line.append(key: "method", value: method.rawValue)
            line.endLine()
            send(line.bytes, to: connection)
        case .evaluationFailed(let uid, let ctx, _, let failure):
            writeJournal("Authentication failed for uid \(uid): \(failure.code.wireName).")
            guard let (connection, tag) = owner(ctx) else { return }
            connection.evaluationTags[ctx] = nil
            var line = LineWriter()
            line.beginLAError(tag: tag, code: failure.code.rawValue, name: failure.code.wireName, message: failure.message)
            if let retry = failure.retryAfter { line.append(key: "retry-after", value: Int(retry)) }
            line.endLine()
            send(line.bytes, to: connection)
        case .biometricFailed(let uid, _, _):
            if authenticator.state.user(uid).biometryLockedOut { writeJournal("Biometry locked out for uid \(uid).") }
        case .passcodeRejected(let uid, _, _, true):
            writeJournal("Wrong passcode for uid \(uid) (\(authenticator.state.user(uid).passcodeFailures) failures).")
        default:
            break
        }
    }

    private func owner(_ ctx: ContextID) -> (SimConnection, String)? {
        for id in connections.keys.sorted() {
            let connection = connections[id]!
            if connection.state != .closed, let tag = connection.evaluationTags[ctx] { return (connection, tag) }
        }
        return nil
    }

    // MARK: - Output through the gate

    func send(_ bytes: [UInt8], to connection: SimConnection) {
        guard connection.state != .closed else { return }
        connection.chunks.append((bytes.count, failed == nil ? newestFailure : 0))
        if gate.admits(connection.id, barrier: authenticator.revealGate, durable: { recorder.durableSeq }) {
            connection.output.append(contentsOf: bytes)
        } else {
            gate.hold(bytes, for: connection.id, barrier: authenticator.revealGate)
        }
    }

    func writeJournal(_ text: String) {
        let line = JournalLine(text: text, reveals: failed == nil ? newestFailure : 0)
        if let now = gate.journal(line, barrier: authenticator.revealGate, durable: { recorder.durableSeq }) { wrote(now) }
    }

    private func wrote(_ line: JournalLine) {
        oracle.revealed(line.reveals, durable: recorder.durableSeq, what: "journal line \"\(line.text)\"")
        journal.append(line.text)
    }

    /// The end of a loop turn: the log written and a sync asked for, a
    /// failure failed closed, what is durable released.
    func endOfTurn() {
        if failed == nil { authenticator.flush() }
        if failed == nil, let failure = recorder.failure { failClosed(failure) }
        guard !gate.isEmpty else { return }
        gate.durable(through: recorder.durableSeq, journal: { wrote($0) }, release: { id, bytes in
            connections[id]?.output.append(contentsOf: bytes)
        })
    }

    /// The socket writes of a turn: each connection's output, checked by
    /// the oracle chunk by chunk, handed to its client.
    func takeOutput(_ connection: SimConnection) -> [UInt8] {
        var delivered = connection.output.count
        while delivered > 0, let chunk = connection.chunks.first {
            if chunk.count > delivered {
                oracle.violation("S-40: connection \(connection.id) was sent part of a chunk (the gate split a reply)")
                break
            }
            oracle.revealed(chunk.reveals, durable: recorder.durableSeq, what: "a reply to connection \(connection.id)")
            delivered -= chunk.count
            connection.chunks.removeFirst()
        }
        defer { connection.output.removeAll() }
        return connection.output
    }

    /// The chunks of output that the gate dropped are gone from the oracle's view too.
    private func dropHeldChunks(_ connection: SimConnection) {
        var covered = 0
        var kept = 0
        for chunk in connection.chunks {
            guard covered + chunk.count <= connection.output.count else { break }
            covered += chunk.count
            kept += 1
        }
        connection.chunks.removeLast(connection.chunks.count - kept)
    }

    // MARK: - Failing closed (ServerFailure.swift, in small)

    func failClosed(_ why: String) {
        failed = why
        oracle.logFailed(atSeq: recorder.lastSeq)
        let lost = Set(gate.logFailed())
        for id in connections.keys.sorted() {
            let connection = connections[id]!
            dropHeldChunks(connection)
            for ctx in connection.evaluationTags.keys.sorted() {
                let tag = connection.evaluationTags[ctx]!
                send(errorLine(tag, ProtocolError(.unavailable, "The event log cannot record events.")), to: connection)
            }
            connection.evaluationTags.removeAll()
            if lost.contains(id) {
                send(errorLine("*", ProtocolError(.unavailable, "The event log cannot record events.")), to: connection)
                var bye = LineWriter()
                bye.appendBye(reason: "shutdown")
                send(bye.bytes, to: connection)
                connection.state = .closing
                connection.lostReplies = true
            }
        }
        jobs.removeAll()
    }

    func errorLine(_ tag: String, _ error: ProtocolError) -> [UInt8] {
        var line = LineWriter()
        line.appendProtocolError(tag: tag, error)
        return line.bytes
    }

    // MARK: - Connections

    func open(id: UInt64, uid: UserID, isAdmin: Bool) {
        connections[id] = SimConnection(id: id, uid: uid, isAdmin: isAdmin)
    }

    /// The peer went away: its contexts end (S-14), its held output vanishes.
    func close(_ id: UInt64) {
        guard let connection = connections[id], connection.state != .closed else { return }
        connection.state = .closed
        connection.evaluationTags.removeAll()
        for ctx in connection.contexts where failed == nil {
            run(.invalidate(ctx: ctx, reason: .disconnect))
        }
        connection.contexts.removeAll()
        gate.forget(id)
        connections[id] = nil
    }

    // MARK: - Workers, sensor, clock

    /// The worker picks the first waiting job: S-46's admission first.
    func startPasscodeJob() {
        guard failed == nil, let index = jobs.firstIndex(where: { !$0.admitted }) else { return }
        let job = jobs[index]
        guard jobs.allSatisfy({ !$0.admitted || $0.uid != job.uid }) else { return }  // one check per uid
        let refusal = authenticator.state.passcodeEntryRefusal(job.uid, now: now)
        let outcome = run(.admitPasscodeAttempt(uid: job.uid, ctx: job.ctx, eval: job.eval))
        guard case .events(let events) = outcome, events.isEmpty else {
            jobs.remove(at: index)
            return
        }
        if let refusal { oracle.violation("S-46: a check of uid \(job.uid)'s passcode was admitted during \(refusal.message)") }
        jobs[index].admitted = true
    }

    func finishPasscodeJob() {
        guard failed == nil, let index = jobs.firstIndex(where: { $0.admitted }) else { return }
        let job = jobs.remove(at: index)
        run(.passcodeChecked(uid: job.uid, ctx: job.ctx, eval: job.eval, correct: job.correct, repeated: false))
    }

    func tick(by micros: Int64) {
        now += micros
        guard failed == nil else { return }
        if let deadline = authenticator.state.nextPromptDeadline, deadline <= authenticator.state.effectiveNow(now) {
            run(.expirePrompts)
        }
        recorder.flush(durableThrough: recorder.lastSeq)
    }
}
