// One deterministic run: a seed, a number of steps. Each step is one thing
// that can happen to a daemon — a client sends bytes (well formed, hostile,
// a line cut anywhere) or goes away, the sensor reads, a passcode worker
// starts or finishes, the loop ends its turn, the sync thread syncs, time
// passes, the disk is armed with a fault, the daemon crashes or stops and
// restarts on what the disk kept — chosen by the seeded generator only.
// After every step the Oracle's invariants are checked; the first
// violation ends the run with its seed and step, and the same seed replays
// it exactly (no clock, no Dictionary order, no randomness but the seed's).
import LocalAuthCore
import LocalAuthLog
import LocalAuthProtocol
@testable import LocalAuthServer

public final class Simulation {
    public let seed: UInt64
    public let oracle = Oracle()
    private var random: SeededGenerator
    private let disk = SimulatedDisk()
    private var daemon: SimulatedDaemon!
    private var clients: [SimulatedClient] = []
    private var nextConnection: UInt64 = 16
    private var boots = 0
    /// The fold of every record the log took, decoded from its bytes (S-38).
    private var shadow = AuthState()
    private var shadowOffset = 0
    /// The byte the run rotted on the platter (offset, bit), until a restart finds it.
    private var rotted: (offset: Int, bit: Int)?
    /// A readable line per step, for a failure's report.
    public private(set) var trace: [String] = []
    let rules: Rules

    /// The passcode every simulated user has (clients guess right or wrong).
    public static func passcode(of uid: UserID) -> String { "pass-\(uid)" }

    public init(seed: UInt64) {
        self.seed = seed
        random = SeededGenerator(seed: seed)
        var rules = Rules.default
        // Small numbers, so that lockouts, delays and the admin lock happen often.
        rules.lockoutThreshold = 3
        rules.delayAfterFailures = 2
        rules.backoff = [5, 30].map { $0 * Timestamp.second }
        rules.maxPasscodeFailures = random.chance(50) ? 6 : 0
        rules.promptTimeout = 20 * Timestamp.second
        self.rules = rules
        let users: [UserID] = [0, 1000, 1001, 1002, 1003]
        for index in 0..<(3 + random.below(5)) {
            let uid = users[index % users.count]
            clients.append(SimulatedClient(uid: uid, isAdmin: uid == 0))
        }
        boot(state: AuthState(), lastSeq: 0)
        // The administrator enrolls every user and sets their passcode.
        for uid in users where uid != 0 {
            daemon.run(.enroll(uid: uid, template: "finger", by: 0, domainState: "d\(uid)"))
            daemon.run(.changePasscode(uid: uid, set: true, by: 0))
        }
        catchUpShadow()
    }

    /// Runs `steps` steps, or until the first violation.
    public func run(steps: Int) -> Bool {
        for step in 1...max(1, steps) {
            oracle.step = step
            oracle.count(step: ())
            perform()
            check()
            if !oracle.violations.isEmpty { return false }
        }
        return true
    }

    // MARK: - Steps

    private func perform() {
        let roll = random.below(1000)
        switch roll {
        case 0..<480: clientActs()
        case 480..<580: sensorReads()
        case 580..<640: trace("worker starts a check"); daemon.startPasscodeJob()
        case 640..<700: trace("worker finishes a check"); daemon.finishPasscodeJob()
        case 700..<850: endTurn()
        case 850..<940: trace("sync thread"); daemon.recorder.syncIfAsked()
        case 940..<975: passTime()
        case 975..<981: armFault()
        case 981..<993: disconnect()
        case 993..<998: crash()
        default: cleanStop()
        }
    }

    private func trace(_ text: String) {
        trace.append("\(oracle.step): \(text)")
        if trace.count > 400 { trace.removeFirst(100) }
    }

    private func clientActs() {
        let client = random.pick(clients)
        guard let id = client.connection else {
            let id = nextConnection
            nextConnection += 1
            client.connection = id
            daemon.open(id: id, uid: client.uid, isAdmin: client.isAdmin)
            trace("uid \(client.uid) connects (\(id))")
            return
        }
        if !client.partial.isEmpty {
            // The rest of a line it began sending.
            let bytes = client.partial
            client.partial.removeAll()
            trace("uid \(client.uid) sends the rest of a line")
            if !daemon.receive(bytes, on: id) { client.unread(client.partialTag) }
            return
        }
        let before = client.lastTag
        var bytes = line(for: client)
        // The tag of the request made now (hostile lines are not tracked).
        let sent = client.lastTag != before ? client.lastTag : nil
        if random.chance(10), bytes.count > 1 {
            // A line cut anywhere: the rest comes in a later step.
            let cut = 1 + random.below(bytes.count - 1)
            client.partial = Array(bytes[cut...])
            client.partialTag = sent
            bytes = Array(bytes[..<cut])
        }
        trace("uid \(client.uid) sends \(String(decoding: bytes.prefix(120), as: UTF8.self).debugDescription)")
        if !daemon.receive(bytes, on: id) { client.unread(sent) }
    }

    /// One request line: mostly the protocol's verbs, sometimes hostile bytes.
    private func line(for client: SimulatedClient) -> [UInt8] {
        let ctx = client.contexts.isEmpty ? "00112233445566778899aabbccddeeff" : random.pick(client.contexts)
        let policy = random.pick(["biometrics", "owner", "owner", "companion", "nonsense"])
        let others: [UserID] = [1000, 1001, 1002, 1003, 4242]
        switch random.below(100) {
        case 0..<12: return client.request("new")
        case 12..<30: return client.request("can-evaluate", [("ctx", ctx), ("policy", policy)])
        case 30..<46: return client.request("evaluate", [("ctx", ctx), ("policy", policy), ("reason", "sim")])
        case 46..<58:
            let secret = random.chance(40) ? Simulation.passcode(of: client.uid) : "wrong-\(random.below(3))"
            let target = client.running.first { client.atPasscode.contains($0.key) }?.value ?? ctx
            return client.request("passcode", [("ctx", target), ("secret", secret)])
        case 58..<63: return client.request("fallback", [("ctx", ctx)])
        case 63..<68: return client.request("cancel", [("ctx", ctx)])
        case 68..<73: return client.request("invalidate", [("ctx", ctx)])
        case 73..<77: return client.request("status")
        case 77..<79: return client.request("ping")
        case 79..<81: return client.request("quit")
        case 81..<86: return client.request("enroll", [("uid", String(random.pick(others)))])
        case 86..<89: return client.request("reset", [("uid", String(random.pick(others)))])
        case 89..<90: return client.request("unlocked", [("uid", String(random.pick(others)))])
        case 90..<93:
            let property = random.pick([("reuse-duration", String(random.pick([0, 5, 60, 400]))),
                                        ("interaction-not-allowed", random.chance(50) ? "true" : "false"),
                                        ("fallback-title", random.pick(["", "Use Passcode", "x y"])),
                                        ("reuse-duration", "-1")])
            return client.request("set", [("ctx", ctx), property])
        default: return hostileLine(client)
        }
    }

    private func hostileLine(_ client: SimulatedClient) -> [UInt8] {
        oracle.countHostileLine()
        switch random.below(6) {
        case 0: return (0..<(1 + random.below(40))).map { _ in UInt8(truncatingIfNeeded: random.next()) } + [10]
        case 1: return Array("\(client.tag()) new bogus=1\n".utf8)
        case 2: return Array("\(client.tag()) fly-away ctx=1\n".utf8)
        case 3: return Array("\(client.tag()) evaluate ctx=\(String(repeating: "z", count: 40)) policy=owner reason=x\n".utf8)
        case 4: return Array(repeating: UInt8(ascii: "a"), count: 8200) + [10]
        default: return Array("\n  \r\n=\0\n".utf8)
        }
    }

    private func sensorReads() {
        let waiting = daemon.authenticator.state.prompting.sorted().compactMap { ctx -> UserID? in
            guard let context = daemon.authenticator.state.contexts[ctx], let evaluation = context.evaluation,
                  !evaluation.isInPasscodePhase else { return nil }
            return context.uid
        }
        guard !waiting.isEmpty else { return }
        let uid = random.pick(waiting)
        let reading: SensorReading = random.chance(30) ? .match : .noMatch
        trace("sensor reads \(reading) for uid \(uid)")
        daemon.run(.sensor(uid: uid, reading: reading))
    }

    private func endTurn() {
        trace("end of turn")
        daemon.endOfTurn()
        for client in clients {
            guard let id = client.connection, let connection = daemon.connections[id] else { continue }
            let bytes = daemon.takeOutput(connection)
            if !bytes.isEmpty { trace("  uid \(client.uid) (\(id)) receives \(String(decoding: bytes.prefix(160), as: UTF8.self).debugDescription)") }
            client.receive(bytes, oracle: oracle)
            if connection.state == .closing, !daemon.gate.isHolding(id), connection.evaluationTags.isEmpty {
                // Drained after quit (or a protocol close): the socket closes.
                daemon.close(id)
                client.disconnected(cleanly: !connection.lostReplies, oracle: oracle)
            }
        }
    }

    private func passTime() {
        var micros = random.pick([100_000, 1_000_000, 6_000_000, 25_000_000, 90_000_000]) as Int64
        if random.chance(15) {
            // The wall clock is set back (S-8): delays must not shorten.
            micros = -Int64(1 + random.below(300)) * Timestamp.second
            oracle.countClockSetBack()
        } else if random.chance(5) {
            reloadRules()
        }
        trace("time passes \(micros / 1000) ms")
        daemon.tick(by: micros)
        if daemon.failed != nil, micros >= 5 * Timestamp.second {
            // ServerFailure.retryLog: the log is reopened on what the file
            // holds (the process lived: its page cache too), as a restart.
            trace("the failed log is reopened")
            oracle.countReopen()
            restart(durableBefore: disk.syncedSeq)
        }
    }

    /// A configuration reload with other rules (rules-applied is durable
    /// before any reply, like an admin action).
    private func reloadRules() {
        var rules = self.rules
        rules.lockoutThreshold = 2 + random.below(4)
        rules.delayAfterFailures = 1 + random.below(4)
        rules.maxPasscodeFailures = random.pick([0, 4, 6])
        rules.promptTimeout = Int64(5 + random.below(40)) * Timestamp.second
        rules.passcodeRequiredAfter = random.chance(30) ? 30 * Timestamp.second : 0
        trace("rules reloaded: lockout \(rules.lockoutThreshold), delay after \(rules.delayAfterFailures), max \(rules.maxPasscodeFailures)")
        oracle.countReload()
        if daemon.failed == nil { daemon.run(.applyRules(rules)) }
    }

    private func armFault() {
        let fault = random.pick([DiskFault.tornWrite, .noSpaceOnWrite, .ioErrorOnWrite, .ioErrorOnSync])
        trace("disk armed: \(fault.rawValue)")
        oracle.count(fault)
        if fault == .ioErrorOnSync { disk.armedSyncFault = true } else { disk.armedWriteFault = fault }
        let chunk = random.next()
        daemon.recorder.tornKeep = { count in count <= 1 ? 0 : Int(chunk % UInt64(count)) }
    }

    private func disconnect() {
        let connected = clients.filter { $0.connection != nil }
        guard !connected.isEmpty else { return }
        let client = random.pick(connected)
        trace("uid \(client.uid) disconnects")
        daemon.close(client.connection!)
        client.disconnected(cleanly: false, oracle: oracle)
        oracle.countDisconnect()
    }

    // MARK: - Crashes and restarts

    private func crash() {
        let unsynced = disk.file.count - disk.syncedLength
        let survive = unsynced == 0 ? 0 : random.below(unsynced + 1)
        trace("crash (\(survive) of \(unsynced) unsynced bytes survive)")
        oracle.count(.crash)
        let durable = disk.syncedSeq
        disk.crash(survive: survive)
        if random.chance(15), let offset = rotOffset() {
            let bit = random.below(8)
            disk.rot(at: offset, bit: bit)
            rotted = (offset, bit)
            oracle.count(.bitRot)
            trace("byte \(offset) rots")
        }
        restart(durableBefore: durable)
    }

    /// A byte of a durable record that an intact record follows (damage to
    /// the last record is a torn write by construction, FORMAT.md).
    private func rotOffset() -> Int? {
        let ends = disk.ends.filter { $0.end <= disk.syncedLength }
        guard ends.count >= 2 else { return nil }
        return random.below(ends[ends.count - 2].end)
    }

    private func cleanStop() {
        trace("clean stop")
        oracle.countCleanStop()
        if daemon.failed == nil {
            daemon.run(.stop)
            for id in daemon.connections.keys.sorted() {
                let connection = daemon.connections[id]!
                connection.evaluationTags.removeAll()
                var bye = LineWriter()
                bye.appendBye(reason: "shutdown")
                daemon.send(bye.bytes, to: connection)
            }
            daemon.recorder.flush(durableThrough: daemon.recorder.lastSeq)
            daemon.recorder.syncIfAsked()
        }
        daemon.endOfTurn()
        let stopped = daemon.failed == nil
        for client in clients {
            guard let id = client.connection, let connection = daemon.connections[id] else { continue }
            client.receive(daemon.takeOutput(connection), oracle: oracle)
            client.disconnected(cleanly: stopped, oracle: oracle)
        }
        restart(durableBefore: disk.syncedSeq)
    }

    private func restart(durableBefore durable: UInt64) {
        for client in clients where client.connection != nil { client.disconnected(cleanly: false, oracle: oracle) }
        var recovery = DiskRecovery(disk.file)
        if let rot = rotted {
            rotted = nil
            if recovery.corruption == nil {
                oracle.violation("S-41: a flipped bit at byte \(rot.offset) of a durable record was not refused "
                    + "(recovery kept \(recovery.lastSeq) records, cut \(recovery.tornBytes) bytes)")
                return
            }
            // The daemon refused to start; the administrator restores the byte.
            disk.rot(at: rot.offset, bit: rot.bit)
            recovery = DiskRecovery(disk.file)
        }
        if let corruption = recovery.corruption {
            return oracle.violation("S-41: the log the simulator wrote does not recover: \(corruption)")
        }
        if recovery.lastSeq < durable {
            return oracle.violation("lockout bypass: recovery kept seq \(recovery.lastSeq) but \(durable) was durable")
        }
        if recovery.lastSeq < oracle.newestRevealedFailure {
            return oracle.violation("lockout bypass: the failure at seq \(oracle.newestRevealedFailure) was revealed but is not in the log")
        }
        if recovery.tornBytes > 0 { oracle.countTornTail() }
        disk.recovered(length: recovery.length, records: recovery.records)
        let state = recovery.state
        shadow = state
        shadowOffset = 0
        oracle.restarted()
        boot(state: state, lastSeq: recovery.lastSeq)
    }

    private func boot(state: AuthState, lastSeq: UInt64) {
        boots += 1
        let clock = max(daemon?.now ?? 1_700_000_000 * Timestamp.second, state.clockHighWater)
        daemon = SimulatedDaemon(state: state, disk: disk, lastSeq: lastSeq, now: clock, oracle: oracle,
                                 random: { [unowned self] in self.random.next() })
        daemon.run(.start(version: "sim", bootID: "boot-\(boots)", pid: 1, rules: rules))
    }

    // MARK: - Invariants after every step

    private func check() {
        catchUpShadow()
        oracle.compare(live: daemon.authenticator.state, fold: shadow, "after the step")
    }

    /// Folds the records appended since the last look, decoded from their bytes.
    private func catchUpShadow() {
        daemon.recorder.appended.withUnsafeBytes { raw in
            while shadowOffset < raw.count {
                guard case .record(_, let time, let keys, let payload, let end) = RecordFraming.check(
                    raw, at: shadowOffset, expectedSeq: shadow.eventCount + 1, zerosEnd: false) else {
                    return oracle.violation("S-38: the record after seq \(shadow.eventCount) does not decode")
                }
                guard let body = try? EventCodec.decode(kind: keys.type, payload: UnsafeRawBufferPointer(rebasing: raw[payload])) else {
                    return oracle.violation("S-38: the payload of seq \(shadow.eventCount + 1) does not decode")
                }
                shadow.apply(Event(time: time, body))
                shadowOffset = end
            }
        }
    }
}
