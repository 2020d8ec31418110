// Reading the journal back (sd-journal): the newest entry that matches a set
// of FIELD=value pairs, and whether a journald runs at all. The daemon reads
// its own log anchors this way at start (S-49), and `localauthctl verify
// --journal` compares with them. Matches should include a trusted field
// (`_UID=`, set by journald from the sender's credentials, not by the
// sender) so that another local user cannot plant an entry that matches.
import CSystemd
import Glibc

public enum JournalReader {
    /// Where journald takes native entries; absent when no journald runs
    /// (a container without systemd, the integration tests).
    public static let socketPath = "/run/systemd/journal/socket"

    public static var isRunning: Bool { access(socketPath, F_OK) == 0 }

    public enum Answer: Sendable, Equatable {
        /// The newest matching entry's fields (those asked for) and its time (µs).
        case entry([String: String], realtime: UInt64)
        /// Journal files were readable, none matched.
        case none
        /// No journal file could be opened by this process (permissions:
        /// the system journal is readable by root, adm and systemd-journal).
        case unreadable
    }

    /// The newest entry of the local journal matching every `matches` pair;
    /// `fields` are the ones returned. `directory`: read the journal files
    /// there instead (sd_journal_open_directory), for tests and copies.
    public static func newest(matching matches: [(String, String)], fields: [String], directory: String? = nil)
        throws(SystemError) -> Answer {
        var journal: OpaquePointer?
        let rc = directory.map { sd_journal_open_directory(&journal, $0, 0) }
            ?? sd_journal_open(&journal, Int32(SD_JOURNAL_LOCAL_ONLY))
        guard rc >= 0, let journal else { throw SystemError(call: "sd_journal_open", errno: -rc, path: directory ?? "") }
        defer { sd_journal_close(journal) }
        if sd_journal_has_runtime_files(journal) <= 0 && sd_journal_has_persistent_files(journal) <= 0 { return .unreadable }
        for (key, value) in matches {
            let match = Array("\(key)=\(value)".utf8)
            let added = match.withUnsafeBytes { sd_journal_add_match(journal, $0.baseAddress, $0.count) }
            guard added >= 0 else { throw SystemError(call: "sd_journal_add_match", errno: -added, path: key) }
        }
        let sought = sd_journal_seek_tail(journal)
        guard sought >= 0 else { throw SystemError(call: "sd_journal_seek_tail", errno: -sought, path: "") }
        let moved = sd_journal_previous(journal)
        guard moved >= 0 else { throw SystemError(call: "sd_journal_previous", errno: -moved, path: "") }
        if moved == 0 { return .none }
        var result: [String: String] = [:]
        for field in fields {
            var data: UnsafeRawPointer?
            var length = 0
            guard sd_journal_get_data(journal, field, &data, &length) >= 0, let data else { continue }
            // "FIELD=value"
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
            result[field] = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
        }
        var realtime: UInt64 = 0
        _ = sd_journal_get_realtime_usec(journal, &realtime)
        return .entry(result, realtime: realtime)
    }
}
