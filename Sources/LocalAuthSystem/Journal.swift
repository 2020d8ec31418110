// Journal: structured log entries for journald (sd_journal_sendv, since the
// variadic sd_journal_send does not import into Swift), and the check
// systemd documents for whether stderr already goes to the journal, so
// callers can fall back to plain stderr lines otherwise.
import CSystemd
import Glibc

public enum Journal {
    /// Sends one entry of "KEY=value" fields (MESSAGE, PRIORITY, custom keys
    /// in upper case). Returns false when journald refused it or `fields` is
    /// empty; note that it returns true when no journald is listening.
    @discardableResult
    public static func send(fields: [(String, String)]) -> Bool {
        // All fields in one buffer, so every iovec points into memory that
        // lives for the whole call.
        var storage: [UInt8] = []
        var ranges: [Range<Int>] = []
        for (key, value) in fields {
            let start = storage.count
            storage.append(contentsOf: key.utf8)
            storage.append(UInt8(ascii: "="))
            storage.append(contentsOf: value.utf8)
            ranges.append(start..<storage.count)
        }
        guard !ranges.isEmpty else { return false }
        return storage.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            let vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            return sd_journal_sendv(vectors, Int32(vectors.count)) >= 0
        }
    }

    /// True when stderr is the journal stream systemd set up
    /// ($JOURNAL_STREAM is "device:inode" of stderr).
    public static var isConnectedToJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: value).split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
