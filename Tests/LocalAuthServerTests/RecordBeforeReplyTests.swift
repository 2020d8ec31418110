// "A record reaches the log's file before any reply that depends on it
// leaves" (S-19, and the coalesced checks' crash promise, S-48): the
// ServerCore over the real LogRecorder and EventLog, its actions performed
// as the shell would, checking at every `.send` that nothing appended is
// still unwritten (a SIGKILL right after the send would lose it).
import Foundation
import LocalAuthConfig
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem
@testable import LocalAuthServer
@testable import LocalAuthSimulation
import XCTest

final class RecordBeforeReplyTests: XCTestCase {
    var directory = ""
    var log: EventLog!
    var core: ServerCore!
    var monotonic: UInt64 = 1_000_000_000
    /// What each `.send` wrote, and whether the log had unwritten records then.
    var sent: [UInt8] = []
    var sendsWithUnwrittenRecords = 0

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rbr-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        log = try EventLog.open(directory, options: .init(syncPolicy: .onDemand))
        let recorder = LogRecorder(log: log, failure: FailureFlag())
        core = ServerCore(configuration: DaemonConfiguration(), authenticator: Authenticator(state: AuthState(), recorder: recorder),
                          passcodes: SimulatedPasscodes(), version: "test", daemonUID: 0)
        turn()
    }

    override func tearDown() {
        core = nil
        try? log?.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func turn() {
        monotonic += 1_000_000
        let micros = Int64(monotonic / 1000)
        core.beginTurn(TurnTime(wall: 1_700_000_000_000_000 + micros, boot: micros, monotonic: monotonic))
    }

    /// The shell: its sockets take every byte; each write counts whether
    /// the log still had unwritten records then.
    final class Shell: ServerShell {
        unowned let test: RecordBeforeReplyTests
        init(_ test: RecordBeforeReplyTests) { self.test = test }
        func socketIsOpen(_ id: Connection.ID) -> Bool { true }
        func write(_ bytes: UnsafeRawBufferPointer, to id: Connection.ID) -> Int? {
            if test.log.hasUnwritten { test.sendsWithUnwrittenRecords += 1 }
            test.sent += bytes
            return bytes.count
        }
        func watch(_ id: Connection.ID, reading: Bool, writing: Bool) {}
        func close(_ id: Connection.ID) {}
        func notify(_ state: String) {}
        func journal(_ entry: JournalEntry) {}
        func runPasscodeJob(token: UInt64, _ job: PasscodeWorkers.Job) {}
        func commitPasscode(_ record: String?, for uid: UserID) throws {}
        func lookUpGroup(_ query: GroupQuery) {}
        func readConfiguration() -> Result<DaemonConfiguration, any Error>? { nil }
    }

    let performer = ActionPerformer()

    private func perform() { performer.perform(core, through: Shell(self)) }

    private func feed(_ text: String, on id: Connection.ID) {
        Array(text.utf8).withUnsafeBytes { _ = core.received($0, on: id) }
        perform()
    }

    /// A connection of root with one context: (its id, the context).
    private func connectionWithContext() throws -> (Connection.ID, String) {
        guard case .accepted(let id) = core.connectionOpened(peer: PeerCredentials(pid: 1, uid: 0, gid: 0)) else {
            throw XCTSkip("not accepted")
        }
        perform()
        feed("n new\n", on: id)
        core.endOfTurn()
        perform()
        let reply = String(decoding: sent, as: UTF8.self)
        let ctx = try XCTUnwrap(reply.split(separator: " ").first { $0.hasPrefix("ctx=") }?.dropFirst(4))
        XCTAssertEqual(sendsWithUnwrittenRecords, 0)
        return (id, ctx.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func test_S19_aPipelinedReadsEarlyRepliesLeaveOnlyOnceTheirChecksAreOnTheFile() throws {
        let (id, ctx) = try connectionWithContext()
        turn()
        sent = []
        // More replies than the 16 KiB after which a read's output is sent early.
        let count = 1_000
        feed((0..<count).map { "c\($0) can-evaluate ctx=\(ctx) policy=owner\n" }.joined(), on: id)
        XCTAssertFalse(sent.isEmpty, "sent during the read")
        XCTAssertEqual(sendsWithUnwrittenRecords, 0, "an early reply left before its check reached the log's file")
        core.endOfTurn()
        perform()
        XCTAssertEqual(String(decoding: sent, as: UTF8.self).split(separator: "\n").count, count)
        XCTAssertEqual(sendsWithUnwrittenRecords, 0)
    }

    func test_S19_theRepliesOfAPeerThatHalfClosedLeaveOnlyOnceTheirChecksAreOnTheFile() throws {
        let (id, ctx) = try connectionWithContext()
        // Given checks read in one turn (a run the recorder keeps open),
        turn()
        sent = []
        feed("c1 can-evaluate ctx=\(ctx) policy=owner\nc2 can-evaluate ctx=\(ctx) policy=owner\n", on: id)
        XCTAssertTrue(sent.isEmpty, "nothing is sent mid-read for two replies")
        // when the same turn reads the peer's EOF (a half-closed `socat`),
        core.peerClosed(id)
        perform()
        core.endOfTurn()
        perform()
        // then the replies leave, and only after their checks are on the file.
        let text = String(decoding: sent, as: UTF8.self)
        XCTAssertTrue(text.contains("c1 ") && text.contains("c2 "), text)
        XCTAssertEqual(sendsWithUnwrittenRecords, 0, "a reply left before its check reached the log's file")
    }
}
