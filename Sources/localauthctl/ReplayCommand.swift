// `replay` (AUDIT.md): the state derived by folding the log up to a seq or a
// time, judged at that moment: "what was the lockout state of every user at
// 10:42 yesterday". The same fold as the daemon's (AuthState.apply), so
// replay and the live `status` agree on every field (S-38). A snapshot is
// used as the starting point only when it lies before the requested point.

import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

struct ReplayCommand: Command {
    static let name = "replay"
    static let summary = "Print the state derived from the log up to a point (users' lockouts, contexts)"
    static let details = """
        Without a limit, the whole log, judged now. --until T stops before the first
        event after T and judges the state at T; --until-seq N stops after seq N and
        judges it at that event's time. "time" in the output is that moment.
        """
    static let isLive = false
    static let options = [
        StateDirectoryOption.spec,
        OptionSpec("--until-seq", value: "N", help: "replay events 1...N"),
        OptionSpec("--until", value: "T", help: "replay events up to time T (RFC 3339 or relative like -1h)"),
        OptionSpec("-o", "--output", value: "table|json", help: "the output format (default: table)"),
    ]

    var explicitDirectory: String?
    var untilSeq: UInt64?
    var untilTime: Int64?
    var format: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        explicitDirectory = arguments.value(StateDirectoryOption.spec.key)
        untilSeq = try arguments.unsigned("--until-seq")
        untilTime = try arguments.time("--until", now: WallClock.nowMicros())
        if untilSeq != nil && untilTime != nil { throw UsageError("--until-seq and --until exclude each other") }
        if untilSeq == 0 { throw UsageError("invalid value '0' for --until-seq: seqs start at 1") }
        format = try arguments.choice("--output", ["table", "json"])
    }

    func run() throws(CommandFailure) -> Int32 {
        let directory = try StateDirectoryOption.directory(explicitDirectory)
        _ = try StateDirectoryOption.logDirectory(directory)
        let replayed = try ReplayRun.run(directory, untilSeq: untilSeq ?? .max, untilTime: untilTime)
        if let untilSeq, replayed.state.eventCount < untilSeq {
            throw CommandFailure("The log ends at seq \(replayed.state.eventCount), before seq \(untilSeq)")
        }
        // The moment the state is judged at (retry times, S-5).
        let moment = untilTime ?? (untilSeq != nil ? replayed.lastTime : WallClock.nowMicros())
        let view = ReplayView(state: replayed.state, moment: moment)
        if format == "json" {
            Console.out(view.json.pretty())
        } else {
            view.printTable()
        }
        if let note = replayed.note { Console.error("localauthctl: note: \(note)") }
        return 0
    }
}

/// The fold itself: the same `Replay.fold` the daemon starts from.
enum ReplayRun {
    struct Outcome {
        var state: AuthState
        /// The time of the last event folded (or the snapshot's high-water mark).
        var lastTime: Int64
        var fromSnapshot: UInt64?
        var note: String?
    }

    static func run(_ directory: String, untilSeq: UInt64, untilTime: Int64?) throws(CommandFailure) -> Outcome {
        let log: EventLog
        do throws(LogError) {
            log = try EventLog.open(directory, options: .init(chainCheck: .none, readOnly: true))
        } catch {
            throw CommandFailure("Failed to open the event log in \(directory): \(error)")
        }
        do throws(LocalAuthLog.Replay.Failure) {
            let folded = try LocalAuthLog.Replay.fold(log, untilSeq: untilSeq, untilTime: untilTime)
            let note = folded.tornTail.map {
                "the log ends in an unfinished write (\($0)); replayed up to seq \($0.lastSeq)"
            }
            return Outcome(state: folded.state, lastTime: folded.lastTime, fromSnapshot: folded.fromSnapshot, note: note)
        } catch {
            throw CommandFailure(error.description)
        }
    }
}

/// AUDIT.md's replay document, and a table of the same fields.
struct ReplayView {
    let state: AuthState
    let moment: Int64

    var users: [(UserID, UserStatus)] {
        state.users.keys.sorted().map { ($0, state.status($0, now: moment)) }
    }

    var contexts: [(ContextID, ContextState)] {
        state.contexts.keys.sorted().map { ($0, state.contexts[$0]!) }
    }

    static func succeeded(_ context: ContextState) -> [String] {
        (context.succeededBiometric ? ["biometric"] : []) + (context.succeededPasscode ? ["passcode"] : [])
    }

    static func tally(_ t: FailureTally) -> JSONValue {
        .object([
            ("biometric", .number(t.biometric)), ("passcode", .number(t.passcode)), ("refused", .number(t.refused)),
            ("last_at", t.lastAt.map { .string(TimeText.format($0)) } ?? .null),
            ("last_service", .optional(t.lastService)), ("last_tty", .optional(t.lastTTY)), ("last_rhost", .optional(t.lastRHost)),
        ])
    }

    var json: JSONValue {
        .object([
            ("seq", .number(state.eventCount)),
            ("time", .string(TimeText.format(moment))),
            ("users", .object(users.map { uid, status in
                (String(uid), .object([
                    ("templates", .number(status.templates)), ("passcode_set", .bool(status.passcodeSet)),
                    ("biometric_failures", .number(status.biometricFailures)),
                    ("biometry_locked_out", .bool(status.lockedOut)),
                    ("passcode_failures", .number(status.passcodeFailures)),
                    ("passcode_retry_at", status.passcodeRetryAt.map { .string(TimeText.format($0)) } ?? .null),
                    ("admin_locked", .bool(status.adminLocked)),
                    // S-64 (AUDIT.md 1.2).
                    ("failures_since_sign_in", Self.tally(status.failuresSinceSignIn)),
                    ("last_sign_in", status.lastSignIn.map { .string(TimeText.format($0)) } ?? .null),
                ]))
            })),
            ("contexts", .object(contexts.map { id, context in
                (id.hex, .object([
                    ("uid", .number(context.uid)), ("state", .string(context.isOpen ? "open" : "invalidated")),
                    ("invalidation_reason", .optional(context.invalidation?.rawValue)),
                    ("biometry", .string(context.biometry.wireName)),
                    ("succeeded", .array(Self.succeeded(context).map(JSONValue.string))),
                ]))
            })),
        ])
    }

    func printTable() {
        Console.out("State after seq \(state.eventCount), judged at \(TimeText.format(moment))\n")
        var userRows = [["UID", "TEMPLATES", "PASSCODE", "BIO-FAILURES", "BIO-LOCKED", "PC-FAILURES", "PC-RETRY-AT", "ADMIN-LOCKED"]]
        for (uid, s) in users {
            userRows.append([String(uid), String(s.templates), s.passcodeSet ? "set" : "-", String(s.biometricFailures),
                             s.lockedOut ? "yes" : "no", String(s.passcodeFailures),
                             s.passcodeRetryAt.map(TimeText.format) ?? "-", s.adminLocked ? "yes" : "no"])
        }
        Console.out(Self.table(userRows))
        var contextRows = [["CONTEXT", "UID", "STATE", "BIOMETRY", "SUCCEEDED"]]
        for (id, c) in contexts {
            let state = c.invalidation.map { "invalidated (\($0.rawValue))" } ?? "open"
            let succeeded = Self.succeeded(c).joined(separator: ",")
            contextRows.append([id.hex, String(c.uid), state, c.biometry.wireName, succeeded.isEmpty ? "-" : succeeded])
        }
        Console.out("")
        Console.out(Self.table(contextRows))
    }

    static func table(_ rows: [[String]]) -> String {
        guard rows.count > 1 else { return rows[0].joined(separator: "  ") + "\n(none)" }
        var widths = rows[0].map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
