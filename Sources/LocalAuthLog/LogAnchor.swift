// Anchors (S-49): the log's head (seq and chain hash) written outside the
// state directory, at every start, stop and snapshot, so that a state
// directory restored from an older copy, a log cut at a record boundary or
// rewritten is told from the log as it was. The daemon refuses a log behind
// its newest anchor (unless `--accept-log-rollback`); `localauthctl verify
// --journal` compares the same way.
//
// Where anchors go: the journal (`JournalAnchors`, MESSAGE_ID below, matched
// on journald's trusted `_UID=` and the state directory's path), or, with
// LOCALAUTHD_ANCHOR_FILE set, a plain file (`FileAnchors`: the stand-in the
// integration tests use, since they run without journald). With neither, the
// log is not anchored and both the daemon and `verify` say so.
import Glibc
import LocalAuthSystem

public struct LogAnchor: Sendable, Equatable, CustomStringConvertible {
    public var seq: UInt64
    public var chainHead: ChainHead
    /// When it was written (µs since the epoch), when the source knows.
    public var time: UInt64?

    public init(seq: UInt64, chainHead: ChainHead, time: UInt64? = nil) {
        self.seq = seq
        self.chainHead = chainHead
        self.time = time
    }

    public var description: String { "seq \(seq), chain head \(chainHead.hex.prefix(16))…" }
}

/// Where anchors are written and read back.
public protocol AnchorStore: Sendable {
    /// "the journal", "LOCALAUTHD_ANCHOR_FILE=/path": for messages.
    var name: String { get }
    /// The newest anchor of the state directory; nil when there is none.
    /// Throws `AnchorUnavailable` when the store cannot be read at all.
    func newest(stateDirectory: String) throws(AnchorUnavailable) -> LogAnchor?
    /// Writes one anchor (`event`: start, stop or snapshot). Best effort.
    func record(_ anchor: LogAnchor, stateDirectory: String, event: String)
}

public struct AnchorUnavailable: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum Anchors {
    /// MESSAGE_ID of anchor entries (systemd/localauthd.catalog).
    public static let messageID = "3c6d8f1a2e4b4f79a5d0c2e8b7f1a964"
    public static let fileVariable = "LOCALAUTHD_ANCHOR_FILE"

    /// The anchor store of this process, or why there is none.
    public static func current(uid: UInt32) -> Result<AnchorStore, AnchorUnavailable> {
        if let path = getenv(fileVariable).map({ String(cString: $0) }), !path.isEmpty {
            return .success(FileAnchors(path: path))
        }
        guard JournalReader.isRunning else {
            return .failure(AnchorUnavailable("no journald runs here (no \(JournalReader.socketPath))"))
        }
        return .success(JournalAnchors(uid: uid))
    }

    /// The state directory as anchors name it: its absolute path, symlinks resolved.
    public static func identity(_ stateDirectory: String) -> String {
        guard let resolved = realpath(stateDirectory, nil) else { return stateDirectory }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// How the log compares with an anchor.
public enum AnchorComparison: Sendable, Equatable {
    /// The log holds the anchored head (and maybe more after it).
    case holds
    /// The log ends before the anchored seq: rolled back or cut.
    case behind(logSeq: UInt64)
    /// The log reaches the seq with another chain head: rewritten.
    case diverges(logHead: ChainHead)
}

extension EventLog {
    /// Compares this log with `anchor` (chain[anchor.seq] against its head).
    public func compare(with anchor: LogAnchor) -> AnchorComparison {
        let last = lastSeq
        guard anchor.seq <= last else { return .behind(logSeq: last) }
        guard let head = try? chainHead(at: anchor.seq) else { return .behind(logSeq: last) }
        return head == anchor.chainHead ? .holds : .diverges(logHead: head)
    }
}

/// Anchors in the journal: one entry per anchor, read back with sd-journal.
public struct JournalAnchors: AnchorStore {
    /// The uid that wrote them: the daemon's; `_UID=` is set by journald.
    public let uid: UInt32
    public var name: String { "the journal" }

    public init(uid: UInt32) { self.uid = uid }

    public func newest(stateDirectory: String) throws(AnchorUnavailable) -> LogAnchor? {
        let answer: JournalReader.Answer
        do throws(SystemError) {
            answer = try JournalReader.newest(
                matching: [("MESSAGE_ID", Anchors.messageID), ("_UID", String(uid)),
                           ("LOCALAUTH_STATE_DIRECTORY", Anchors.identity(stateDirectory))],
                fields: ["LOCALAUTH_SEQ", "LOCALAUTH_CHAIN"])
        } catch {
            throw AnchorUnavailable("the journal cannot be read: \(error)")
        }
        switch answer {
        case .unreadable:
            throw AnchorUnavailable("no journal file is readable by uid \(getuid()) (the unit needs SupplementaryGroups=systemd-journal)")
        case .none:
            return nil
        case .entry(let fields, let realtime):
            guard let seq = fields["LOCALAUTH_SEQ"].flatMap({ UInt64($0) }),
                  let head = fields["LOCALAUTH_CHAIN"].flatMap(ChainHead.init(hex:)) else {
                throw AnchorUnavailable("the newest anchor in the journal is garbled")
            }
            return LogAnchor(seq: seq, chainHead: head, time: realtime)
        }
    }

    /// PRIORITY=4 (warning): journald rate-limits a service per priority
    /// pool (emerg..crit, err, warning, notice and info, debug), and the
    /// anchors are the only entries the daemon journals at warning (its
    /// DaemonLog has no such priority), so no client's traffic, from any
    /// number of uids, can spend their pool and have one suppressed (S-58).
    public static let priority = "4"

    public func record(_ anchor: LogAnchor, stateDirectory: String, event: String) {
        Journal.send(fields: [
            ("MESSAGE", "Log head at \(event): seq \(anchor.seq), chain \(anchor.chainHead.hex)."),
            ("MESSAGE_ID", Anchors.messageID), ("PRIORITY", Self.priority), ("SYSLOG_IDENTIFIER", "localauthd"),
            ("LOCALAUTH_SEQ", String(anchor.seq)), ("LOCALAUTH_CHAIN", anchor.chainHead.hex),
            ("LOCALAUTH_STATE_DIRECTORY", Anchors.identity(stateDirectory)), ("LOCALAUTH_ANCHOR", event),
        ])
    }
}

/// The test stand-in: one line per anchor, "<state dir>\t<seq>\t<chain hex>\t<event>".
public struct FileAnchors: AnchorStore {
    public let path: String
    public var name: String { "\(Anchors.fileVariable)=\(path)" }

    public init(path: String) { self.path = path }

    public func newest(stateDirectory: String) throws(AnchorUnavailable) -> LogAnchor? {
        guard File.exists(path) else { return nil }
        let text: String
        do throws(SystemError) { text = String(decoding: try File.read(path, maxSize: 64 << 20), as: UTF8.self) } catch {
            throw AnchorUnavailable("\(path) cannot be read: \(error)")
        }
        let identity = Anchors.identity(stateDirectory)
        for line in text.split(separator: "\n").reversed() {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard parts.count >= 3, parts[0] == identity else { continue }
            guard let seq = UInt64(parts[1]), let head = ChainHead(hex: String(parts[2])) else {
                throw AnchorUnavailable("the newest anchor in \(path) is garbled")
            }
            return LogAnchor(seq: seq, chainHead: head)
        }
        return nil
    }

    public func record(_ anchor: LogAnchor, stateDirectory: String, event: String) {
        let line = Array("\(Anchors.identity(stateDirectory))\t\(anchor.seq)\t\(anchor.chainHead.hex)\t\(event)\n".utf8)
        guard let fd = try? FileDescriptor.open(path, .writeOnly, options: [.append, .create]) else { return }
        defer { try? fd.close() }
        try? fd.writeAll(line)
        try? fd.fsync()
    }
}
