// The builtin passcode store's file, `STATE/passcodes`: one `uid:hash` line
// per user with a set passcode (a yescrypt hash, S-39). The daemon keeps it
// (LocalAuthServer's PasscodeStore, which writes it); it lives here, beside
// the log, because the offline tools judge the log against it as the daemon
// does: `repair` records again what a cut lost, and `verify` refuses an
// emptied log beside a store that holds passcodes (S-49), with this one
// reading of the file.
import LocalAuthCore
import LocalAuthSystem

public enum PasscodeStoreFile {
    public static let name = "passcodes"
    /// Larger than any store of real users; a bigger file is refused.
    public static let maxSize = 64 << 20

    public static func path(_ directory: String) -> String { directory + "/" + name }

    /// The hashes by uid; empty when there is no store. A line that does not
    /// parse is an error naming the file and line (the daemon refuses to start).
    public static func read(_ directory: String) throws -> [UserID: String] {
        let path = path(directory)
        guard File.exists(path) else { return [:] }
        let bytes = try File.read(path, maxSize: maxSize)
        var hashes: [UserID: String] = [:]
        for (number, line) in bytes.split(separator: UInt8(ascii: "\n")).enumerated() {
            let text = String(decoding: line, as: UTF8.self)
            let parts = text.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let uid = UserID(parts[0]), parts[1].hasPrefix("$") else {
                throw Malformed(description: "\(path):\(number + 1): malformed passcode entry")
            }
            hashes[uid] = String(parts[1])
        }
        return hashes
    }

    /// The text of a store holding `hashes`, in uid order.
    public static func text(_ hashes: [UserID: String]) -> String {
        hashes.keys.sorted().map { "\($0):\(hashes[$0]!)\n" }.joined()
    }

    public struct Malformed: Error, CustomStringConvertible {
        public var description: String
    }
}
