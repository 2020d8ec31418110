// `log` (AUDIT.md): events in log order, filtered by user, context and time,
// as short lines, JSON lines or verbose blocks. With --uid/--context the
// log's per-user/per-context index is used (a few seeks instead of a scan);
// --follow then keeps polling the log every 200 ms until SIGINT, for what was
// appended since the last seq printed (LocalAuthLog's LogFollower).

import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

struct LogCommand: Command {
    static let name = "log"
    static let summary = "Print the event log (filter by user, context, time; short, json or verbose)"
    static let details = """
        T is an RFC 3339 time (2026-11-29T10:42:00Z; no offset means UTC), "now",
        "today", "yesterday", "tomorrow" (local midnight), or relative to now like
        -1h, -30min, -2d, "1h ago" or just 1h (that long ago), as journalctl reads
        them. --since and --until are inclusive. -n N prints only the newest N
        matching events, -r the newest first; -f with -n prints the newest N, then
        follows.
        -o json prints one object per line: seq, time, type and the event's fields.
        Exit status 1 when the log holds a corrupt record (after printing the
        records before it); run 'localauthctl verify'.
        """
    static let isLive = false
    static let options = [
        StateDirectoryOption.spec,
        OptionSpec("--uid", value: "N", help: "only events about this user (id or name)"),
        OptionSpec("--context", value: "ID", help: "only events about this context (32 hex digits)"),
        OptionSpec("--since", value: "T", help: "only events at or after T"),
        OptionSpec("--until", value: "T", help: "only events at or before T"),
        OptionSpec("-o", "--output", value: "short|json|verbose", help: "the output format (default: short)"),
        OptionSpec("-n", "--lines", value: "N", help: "only the newest N matching events"),
        OptionSpec("-r", "--reverse", help: "the newest events first"),
        OptionSpec("-f", "--follow", help: "keep printing new events until interrupted"),
        OptionSpec("--no-pager", help: "do not pipe the output into a pager"),
    ]

    var explicitDirectory: String?
    var filter: EventFilter
    var format: EventFormat
    var follow: Bool
    var pager: Bool
    var lines: Int?
    var reverse: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        let now = WallClock.nowMicros()
        filter = EventFilter()
        filter.uid = try arguments.uid("--uid")
        if let text = arguments.value("--context") {
            guard let context = ContextID(hex: text) else {
                throw UsageError("invalid value '\(text)' for --context: expected 32 hex digits")
            }
            filter.context = context
        }
        filter.since = try arguments.time("--since", now: now)
        filter.until = try arguments.time("--until", now: now)
        format = EventFormat(rawValue: try arguments.choice("--output", ["short", "json", "verbose"]))!
        follow = arguments.flag("--follow")
        reverse = arguments.flag("--reverse")
        if let count = try arguments.unsigned("--lines") { lines = Int(clamping: count) }
        if follow && reverse { throw UsageError("--reverse and --follow cannot be combined") }
        pager = !arguments.flag("--no-pager") && !follow
        explicitDirectory = arguments.value(StateDirectoryOption.spec.key)
    }

    func run() throws(CommandFailure) -> Int32 {
        let directory = try StateDirectoryOption.directory(explicitDirectory)
        let logDirectory = try StateDirectoryOption.logDirectory(directory)
        let pipe = pager ? Pager.start() : nil
        defer { pipe?.finish() }
        var printer = EventPrinter(format: format, filter: filter)
        // -n and -r need the whole (filtered) read before the first line.
        if lines != nil || reverse { printer.held = [] }
        printer.keep = lines
        // What was appended since the records printed: the log's own
        // follower (LocalAuthLog), which also makes the plain read.
        var follower = LogFollower(logDirectory: logDirectory)
        var status: Int32 = 0
        if filter.uid != nil || filter.context != nil, let indexed = try? indexedRecords(directory) {
            for record in indexed.records { printer.print(seq: record.seq, time: record.time, keys: record.keys, payload: record.payload, at: record.position) }
            follower = LogFollower(logDirectory: logDirectory, after: indexed.lastSeq)
        } else {
            status = try read(&follower, printer: &printer)
        }
        printer.release(reverse: reverse)
        Console.flush()
        guard follow, status == 0 else { return max(status, printer.status) }
        return try followLog(&follower, printer: &printer)
    }

    /// The filtered records through the index, and the log's last seq.
    private func indexedRecords(_ directory: String) throws(LogError) -> (records: [StoredRecord], lastSeq: UInt64) {
        let log = try EventLog.open(directory, options: .init(chainCheck: .none, readOnly: true))
        var records: [StoredRecord]
        if let context = filter.context {
            records = try log.history(context: context)
            if let uid = filter.uid { records = records.filter { $0.keys.uid == uid } }
        } else {
            records = try log.history(uid: filter.uid!)
        }
        return (records, log.lastSeq)
    }

    /// Prints the records appended since the follower's last seq; status 1 on corruption.
    private func read(_ follower: inout LogFollower, printer: inout EventPrinter) throws(CommandFailure) -> Int32 {
        let stop: LogFollower.Stop
        do throws(SystemError) {
            stop = try follower.appended { record in
                printer.print(seq: record.seq, time: record.time, keys: record.keys, payload: record.payload, at: record.position)
            }
        } catch {
            throw CommandFailure("Failed to read the event log: \(error)")
        }
        switch stop {
        case .caughtUp:
            return 0
        case .tornTail(let torn):
            if !follow { Console.error("localauthctl: note: the log ends in an unfinished write (\(torn)); the daemon cuts it when it starts") }
            return 0
        case .corruption(let corruption):
            Console.error("localauthctl: the log cannot be trusted from here: \(corruption); run 'localauthctl verify'")
            return 1
        }
    }

    /// Polls every 200 ms for records after the first read, until SIGINT/SIGTERM.
    /// The follower hands out each record once, in order, across rotations,
    /// and reads the log again only when its tail moved.
    private func followLog(_ follower: inout LogFollower, printer: inout EventPrinter) throws(CommandFailure) -> Int32 {
        let signals: SignalFD
        do throws(SystemError) { signals = try SignalFD(signals: [SIGINT, SIGTERM, SIGHUP]) } catch {
            throw CommandFailure("Failed to set up signal handling: \(error)")
        }
        while true {
            var descriptor = pollfd(fd: signals.fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 200) > 0 { return 0 }
            let status = try read(&follower, printer: &printer)
            Console.flush()
            if status != 0 { return status }
        }
    }
}

struct EventFilter {
    var uid: UserID?
    var context: ContextID?
    var since: Int64?
    var until: Int64?

    func matches(time: Int64, keys: RecordKeys) -> Bool {
        if let uid, keys.uid != uid { return false }
        if let context, keys.context != context { return false }
        if let since, time < since { return false }
        if let until, time > until { return false }
        return true
    }
}

enum EventFormat: String { case short, json, verbose }

/// Decodes and prints one record in the chosen format.
struct EventPrinter {
    let format: EventFormat
    let filter: EventFilter
    /// 1 once a record failed to decode (printed anyway, with the error).
    var status: Int32 = 0
    /// Non-nil: events are kept here (the newest `keep`, when set) until `release`.
    var held: [String]? = nil
    var keep: Int? = nil

    /// Prints what was held (newest first with `reverse`) and stops holding.
    mutating func release(reverse: Bool) {
        guard var events = held else { return }
        held = nil
        if let keep, events.count > keep { events.removeFirst(events.count - keep) }
        for event in reverse ? events.reversed() : events { Console.out(event) }
    }

    private mutating func output(_ text: String) {
        guard held != nil else { return Console.out(text) }
        held!.append(text)
        // Trimmed in batches, so a long log costs O(n), not O(n * keep).
        if let keep, held!.count >= 2 * max(keep, 512) { held!.removeFirst(held!.count - keep) }
    }

    mutating func print(seq: UInt64, time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer, at position: LogPosition) {
        guard filter.matches(time: time, keys: keys) else { return }
        var type: String
        var fields: [(String, JSONValue)]
        do {
            let body = try EventCodec.decode(kind: keys.type, payload: payload)
            type = body.name
            fields = EventFields.fields(body)
            if case .policyCheckedRepeatedly(let checks) = body {
                // S-19: every check, as AUDIT.md's policy-checked, with its
                // count and time range (the record's time is the last check's).
                type = EventKind.policyChecked.name
                fields += [("first", .string(TimeText.format(time - checks.span))), ("last", .string(TimeText.format(time)))]
            }
        } catch {
            status = 1
            type = EventKind(rawValue: keys.type)?.name ?? "unknown-\(keys.type)"
            fields = [("decode_error", .string("\(error)"))]
        }
        emit(seq: seq, time: time, type: type, fields: fields, position: position)
    }

    mutating func print(seq: UInt64, time: Int64, keys: RecordKeys, payload: [UInt8], at position: LogPosition) {
        payload.withUnsafeBytes { print(seq: seq, time: time, keys: keys, payload: $0, at: position) }
    }

    private mutating func emit(seq: UInt64, time: Int64, type: String, fields: [(String, JSONValue)], position: LogPosition) {
        switch format {
        case .json:
            let object = JSONValue.object([("seq", .number(seq)), ("time", .string(TimeText.format(time))), ("type", .string(type))] + fields)
            output(object.text)
        case .short:
            var rest = fields.filter { !Self.isRepetition($0.0) }.map { "\($0.0)=\(Self.humanValue($0.0, $0.1))" }
            if let repetition = Self.repetition(fields) { rest.append(repetition) }
            output("\(TimeText.format(time)) \(seq) \(type)" + (rest.isEmpty ? "" : " " + rest.joined(separator: " ")))
        case .verbose:
            var block = "\(TimeText.format(time)) seq=\(seq) type=\(type)"
            for (key, value) in fields { block += "\n    \(key)=\(Self.humanValue(key, value))" }
            output(block + "\n    record=\"\(position)\"")
        }
    }

    /// Coalesced checks' fields (`count`, `first`, `last`), which the short
    /// format shows as one `×N FIRST..LAST`.
    static func isRepetition(_ key: String) -> Bool { key == "count" || key == "first" || key == "last" }

    static func repetition(_ fields: [(String, JSONValue)]) -> String? {
        guard let count = fields.first(where: { $0.0 == "count" })?.1,
              case .string(let first) = fields.first(where: { $0.0 == "first" })?.1,
              case .string(let last) = fields.first(where: { $0.0 == "last" })?.1 else { return nil }
        return "\u{00D7}\(count.text) \(first)..\(last)"
    }

    /// For people (short, verbose): a policy by its name (`policy=biometrics`;
    /// JSON keeps AUDIT.md's number), everything else as `shortValue`.
    static func humanValue(_ key: String, _ value: JSONValue) -> String {
        if key == "policy", case .int(let number) = value, let policy = Policy(rawValue: Int(number)) {
            return policy.wireName
        }
        return shortValue(value)
    }

    /// Values as in the wire protocol: bare when possible, else JSON-quoted
    /// (which escapes every control, DisplayText).
    static func shortValue(_ value: JSONValue) -> String {
        switch value {
        case .string(let s):
            let bare = !s.isEmpty && s.unicodeScalars.allSatisfy {
                $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\" && !DisplayText.mustEscape($0.value)
            }
            return bare ? s : value.text
        default:
            return value.text
        }
    }
}
