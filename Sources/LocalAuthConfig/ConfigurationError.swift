// What stops the daemon at start-up: a problem in a configuration file,
// always with the file and the line so the administrator can go and fix it.

public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        /// Neither a comment, a `[Section]` nor a `Key=value`.
        case malformedLine(String)
        case keyOutsideSection(key: String)
        case unknownSection(String, known: [String])
        case unknownKey(section: String, key: String, known: [String])
        case badValue(section: String, key: String, value: String, expected: String)
    }

    public var fileName: String
    /// 1-based.
    public var line: Int
    public var problem: Problem

    public init(fileName: String, line: Int, problem: Problem) {
        self.fileName = fileName
        self.line = line
        self.problem = problem
    }

    /// The problem, without the location.
    public var message: String {
        switch problem {
        case .malformedLine(let text):
            return "malformed line '\(text)': expected [Section], Key=value, or a comment starting with # or ;"
        case .keyOutsideSection(let key):
            return "key '\(key)' outside any section: put it under [Daemon], [Biometry], [Passcode] or [Log]"
        case .unknownSection(let name, let known):
            return "unknown section [\(name)]; known sections: \(known.map { "[\($0)]" }.joined(separator: " "))"
        case .unknownKey(let section, let key, let known):
            return "unknown key '\(key)' in [\(section)]; known keys: \(known.joined(separator: " "))"
        case .badValue(let section, let key, let value, let expected):
            return "bad value '\(value)' for \(key)= in [\(section)]: expected \(expected)"
        }
    }

    /// `FILE:LINE: message`, as compilers and systemd print it.
    public var description: String { "\(fileName):\(line): \(message)" }
}
