// Reading a state directory's log offline, as an auditor would: every record
// through LogReader (with the full hash chain) and EventCodec, the fold of
// all events (AuthState, S-38), and EventLog.verify.
import LocalAuthCore
import LocalAuthLog
import LocalAuthTestSupport
import XCTest

struct LoggedEvent {
    var seq: UInt64
    var time: Int64
    var body: EventBody
}

struct LogContents {
    var events: [LoggedEvent] = []
    var state = AuthState()
    var tornTail: TornTail?

    init(stateDirectory: String) throws {
        let reader = try LogReader(logDirectory: stateDirectory + "/log", chain: .full)
        loop: while true {
            switch reader.next() {
            case .record(let record):
                let body = try EventCodec.decode(kind: record.keys.type, payload: record.payload)
                events.append(LoggedEvent(seq: record.seq, time: record.time, body: body))
                state.apply(Event(time: record.time, body))
            case .end:
                break loop
            case .tornTail(let torn):
                tornTail = torn
                break loop
            case .corruption(let corruption):
                throw HarnessError("the log is corrupt: \(corruption)")
            }
        }
    }

    /// Counts events per context for one kind.
    func count(per kind: EventKind) -> [ContextID: Int] {
        var result: [ContextID: Int] = [:]
        for event in events where event.body.kind == kind {
            if let ctx = event.body.ctx { result[ctx, default: 0] += 1 }
        }
        return result
    }

    /// Evaluations (ctx, eval) and how many final events each has.
    func finals() -> (started: Set<String>, finals: [String: Int]) {
        var started = Set<String>()
        var finals: [String: Int] = [:]
        for event in events {
            switch event.body {
            case .evaluationStarted(_, let ctx, let eval, _, _):
                started.insert("\(ctx.hex)/\(eval)")
            case .evaluationSucceeded(_, let ctx, let eval, _), .evaluationFailed(_, let ctx, let eval, _):
                finals["\(ctx.hex)/\(eval)", default: 0] += 1
            default:
                break
            }
        }
        return (started, finals)
    }
}

/// `EventLog.verify` must find nothing wrong (a torn tail is allowed before a restart cuts it).
func assertLogVerifies(_ stateDirectory: String, allowTornTail: Bool = false, _ note: String = "",
                       file: StaticString = #filePath, line: UInt = #line) {
    do {
        let report = try EventLog.verify(stateDirectory)
        XCTAssertTrue(report.isOK, "verify failed \(note): \(report)", file: file, line: line)
        if !allowTornTail {
            XCTAssertNil(report.tornTail, "verify found a torn tail \(note): \(report)", file: file, line: line)
        }
    } catch {
        XCTFail("verify threw \(note): \(error)", file: file, line: line)
    }
}
