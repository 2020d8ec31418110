// Reads localauthd.conf and its drop-ins (already read by the caller) into a
// DaemonConfiguration. The syntax is systemd's INI:
//
//   - `[Section]`, `Key=value`, blank lines, comment lines starting with `#`
//     or `;`; whitespace around keys and values is trimmed; sections and
//     keys are case-sensitive.
//   - Unlike systemd, an inline comment is accepted: whitespace then `#`
//     ends the value (`IdleLineTimeoutSec=10   # ...`), because PROTOCOL.md's
//     own sample file writes them. A `#` not preceded by whitespace is part
//     of the value.
//   - A later assignment wins, within a file and across files; a list
//     (BackoffSec=) is replaced, not appended to.
//   - An empty value resets the key to its default, as in systemd. For
//     AdminGroup=, AuditGroup= and AttemptsPerEvaluation= the empty value is also the
//     meaning the spec gives it (no admin group, no audit group; attempts
//     by type).
//   - No line continuations (trailing `\`); a UTF-8 BOM is skipped.
//
// The first problem stops the parse with a ConfigurationError naming the file
// and the line.

import LocalAuthCore

public enum ConfigurationParser {
    public static let mainFile = "/etc/localauthd/localauthd.conf"
    /// The administrator's drop-ins (the first of `dropInDirectories`).
    public static let dropInDirectory = "/etc/localauthd/localauthd.conf.d"
    /// Where drop-ins are read from, the one that wins first (systemd's
    /// order: /etc over /run over /usr/lib). See `ConfigurationFiles`.
    public static let dropInDirectories = [
        "/etc/localauthd/localauthd.conf.d", "/run/localauthd/localauthd.conf.d",
        "/usr/lib/localauthd/localauthd.conf.d",
    ]

    /// The sections and their keys, in the order of PROTOCOL.md.
    public static let knownKeys: [(section: String, keys: [String])] = [
        ("Daemon", ["Socket", "StateDirectory", "AdminGroup", "AuditGroup", "MaxConnections", "MaxConnectionsPerUser",
                    "MaxContextsPerConnection", "MaxPendingBytes", "IdleLineTimeoutSec",
                    "MaxPropertyBytes", "MaxPropertyBytesPerContext", "MaxPropertyBytesPerUser", "ExitOnIdleSec",
                    "InsecureTestBackendsForPAM"]),
        ("Biometry", ["Type", "Backend", "AttemptsPerEvaluation", "LockoutThreshold", "PromptTimeoutSec",
                      "PasscodeRequiredAfterSec", "PasscodeRequiredAfterBoot", "FprintdBus",
                      "SkipRemote", "LidClosedInaccessible", "BuiltInReader", "CancelOnSuspend", "LogindBus"]),
        ("Passcode", ["Backend", "ShadowFile", "ClientPrompts", "DelayAfterFailures", "BackoffSec", "MaxPasscodeFailures"]),
        ("Log", ["SegmentSize", "SnapshotEvery", "UserEventRate", "UserEventBurst", "ReserveSpace"]),
        ("Secrets", ["KeyFile", "MaxSecretBytes", "MaxRightsPerUser"]),
        ("DBus", ["Serve", "Bus"]),
        ("Keyring", ["ReleaseLoginPassword", "Services"]),
    ]

    /// The drop-in names to read, in order: only `*.conf` (not hidden files),
    /// sorted by their UTF-8 bytes, as systemd does.
    public static func dropInOrder(_ names: [String]) -> [String] {
        names
            .filter { $0.hasSuffix(".conf") && !$0.hasPrefix(".") }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Applies the files in order (later files win) on top of `base`.
    public static func parse(
        _ files: [(fileName: String, contents: String)], base: DaemonConfiguration = .default
    ) throws(ConfigurationError) -> DaemonConfiguration {
        var configuration = base
        for file in files {
            try apply(file.contents, fileName: file.fileName, to: &configuration)
        }
        return configuration
    }

    /// Applies one file's text; the first problem stops it.
    public static func apply(
        _ contents: String, fileName: String, to configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        var assignments: [Assignment] = []
        try scan(contents, fileName: fileName, to: &configuration, assignments: &assignments) {
            problem throws(ConfigurationError) in throw problem
        }
    }

    /// Reads every file to the end, collecting every problem instead of
    /// stopping at the first (`localauthd --test-config`). A bad line is
    /// skipped; the keys under an unknown section are skipped with it.
    public static func check(
        _ files: [(fileName: String, contents: String)], base: DaemonConfiguration = .default
    ) -> ConfigurationCheck {
        var result = ConfigurationCheck(configuration: base)
        for file in files {
            var problems: [ConfigurationError] = []
            scan(file.contents, fileName: file.fileName, to: &result.configuration,
                 assignments: &result.assignments) { problem in problems.append(problem) }
            result.problems += problems
        }
        return result
    }

    /// The one reading of a file. `report` decides whether a problem stops
    /// the scan (it throws) or is collected (it returns).
    static func scan<E: Error>(
        _ contents: String, fileName: String, to configuration: inout DaemonConfiguration,
        assignments: inout [Assignment], report: (ConfigurationError) throws(E) -> Void
    ) throws(E) {
        // nil: before any section; "" under an unknown section (already reported).
        var section: String? = nil
        var lineNumber = 0
        var bytes = Substring(contents).utf8[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            func fail(_ problem: ConfigurationError.Problem) -> ConfigurationError {
                ConfigurationError(fileName: fileName, line: lineNumber, problem: problem)
            }
            let line = trimmed(withoutInlineComment(rawLine))
            guard let first = line.first, first != UInt8(ascii: "#"), first != UInt8(ascii: ";") else { continue }
            let text = String(decoding: line, as: UTF8.self)

            if first == UInt8(ascii: "[") {
                guard line.count > 2, line.last == UInt8(ascii: "]") else {
                    try report(fail(.malformedLine(text)))
                    continue
                }
                let name = String(text.dropFirst().dropLast())
                guard knownKeys.contains(where: { $0.section == name }) else {
                    section = ""
                    try report(fail(.unknownSection(name, known: knownKeys.map(\.section))))
                    continue
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                try report(fail(.malformedLine(text)))
                continue
            }
            let key = String(decoding: trimmed(line[..<equals]), as: UTF8.self)
            let value = String(decoding: trimmed(line[line.index(after: equals)...]), as: UTF8.self)
            guard !key.isEmpty else {
                try report(fail(.malformedLine(text)))
                continue
            }
            guard let section else {
                try report(fail(.keyOutsideSection(key: key)))
                continue
            }
            if section.isEmpty { continue }
            let isKnown: Bool
            do throws(ValueError) {
                isKnown = try assign(section: section, key: key, value: value, to: &configuration)
            } catch {
                try report(fail(.badValue(section: section, key: key, value: value, expected: error.expected)))
                continue
            }
            guard isKnown else {
                let known = knownKeys.first { $0.section == section }?.keys ?? []
                try report(fail(.unknownKey(section: section, key: key, known: known)))
                continue
            }
            assignments.removeAll { $0.section == section && $0.key == key }
            assignments.append(Assignment(section: section, key: key, value: value, fileName: fileName, line: lineNumber))
        }
    }

    /// Sets one key; false when the key is unknown in the section.
    static func assign(
        section: String, key: String, value: String, to configuration: inout DaemonConfiguration
    ) throws(ValueError) -> Bool {
        // An empty value restores the default (see the file comment).
        func set<T>(
            _ field: WritableKeyPath<DaemonConfiguration, T>, _ parse: (String) throws(ValueError) -> T
        ) throws(ValueError) {
            configuration[keyPath: field] =
                value.isEmpty ? DaemonConfiguration.default[keyPath: field] : try parse(value)
        }
        typealias V = ConfigurationValue
        let positive = 1...Int(Int32.max)
        let sizes = 8192...Int.max

        switch (section, key) {
        case ("Daemon", "Socket"): try set(\.daemon.socket, V.absolutePath)
        case ("Daemon", "StateDirectory"): try set(\.daemon.stateDirectory, V.absolutePath)
        case ("Daemon", "AdminGroup"): try set(\.daemon.adminGroup, groupName)
        case ("Daemon", "AuditGroup"): try set(\.daemon.auditGroup, groupName)
        case ("Daemon", "MaxConnections"): try set(\.daemon.maxConnections) { v throws(ValueError) in try V.integer(v, in: positive) }
        case ("Daemon", "MaxConnectionsPerUser"): try set(\.daemon.maxConnectionsPerUser) { v throws(ValueError) in try V.integer(v, in: positive) }
        case ("Daemon", "MaxContextsPerConnection"): try set(\.daemon.maxContextsPerConnection) { v throws(ValueError) in try V.integer(v, in: positive) }
        case ("Daemon", "MaxPendingBytes"): try set(\.daemon.maxPendingBytes) { v throws(ValueError) in try size(v, in: sizes) }
        case ("Daemon", "IdleLineTimeoutSec"): try set(\.daemon.idleLineTimeout, positiveTimeSpan)
        case ("Daemon", "ExitOnIdleSec"): try set(\.daemon.exitOnIdle, V.timeSpan)
        case ("Daemon", "MaxPropertyBytes"): try set(\.daemon.maxPropertyBytes) { v throws(ValueError) in try size(v, in: 1...8192) }
        case ("Daemon", "MaxPropertyBytesPerContext"): try set(\.daemon.maxPropertyBytesPerContext) { v throws(ValueError) in try size(v, in: 1...Int(Int32.max)) }
        case ("Daemon", "MaxPropertyBytesPerUser"): try set(\.daemon.maxPropertyBytesPerUser) { v throws(ValueError) in try size(v, in: 1...Int.max) }
        case ("Daemon", "InsecureTestBackendsForPAM"): try set(\.daemon.insecureTestBackendsForPAM, V.boolean)

        case ("Biometry", "Type"): try set(\.biometry.type, biometryType)
        case ("Biometry", "Backend"): try set(\.biometry.backend) { v throws(ValueError) in try named(v, BiometryBackend.self) }
        case ("Biometry", "AttemptsPerEvaluation"): try set(\.biometry.attemptsPerEvaluation) { v throws(ValueError) in try V.integer(v, in: 1...1000) }
        case ("Biometry", "LockoutThreshold"): try set(\.biometry.lockoutThreshold) { v throws(ValueError) in try V.integer(v, in: 1...1000) }
        case ("Biometry", "PromptTimeoutSec"): try set(\.biometry.promptTimeout, positiveTimeSpan)
        case ("Biometry", "PasscodeRequiredAfterSec"): try set(\.biometry.passcodeRequiredAfter, V.timeSpan)
        case ("Biometry", "PasscodeRequiredAfterBoot"): try set(\.biometry.passcodeRequiredAfterBoot, V.boolean)
        case ("Biometry", "FprintdBus"): try set(\.biometry.fprintdBus, dbusAddress)
        case ("Biometry", "SkipRemote"): try set(\.biometry.skipRemote, V.boolean)
        case ("Biometry", "LidClosedInaccessible"): try set(\.biometry.lidClosedInaccessible, V.boolean)
        case ("Biometry", "BuiltInReader"): try set(\.biometry.builtInReaders) { v throws(ValueError) in V.list(v) }
        case ("Biometry", "CancelOnSuspend"): try set(\.biometry.cancelOnSuspend, V.boolean)
        case ("Biometry", "LogindBus"): try set(\.biometry.logindBus, dbusAddress)

        case ("Passcode", "Backend"): try set(\.passcode.backend) { v throws(ValueError) in try named(v, PasscodeBackend.self) }
        case ("Passcode", "ShadowFile"): try set(\.passcode.shadowFile, V.absolutePath)
        case ("Passcode", "ClientPrompts"): try set(\.passcode.clientPrompts, clientPrompts)
        case ("Passcode", "DelayAfterFailures"): try set(\.passcode.delayAfterFailures) { v throws(ValueError) in try V.integer(v, in: 1...1000) }
        case ("Passcode", "BackoffSec"): try set(\.passcode.backoff, backoffList)
        case ("Passcode", "MaxPasscodeFailures"): try set(\.passcode.maxPasscodeFailures) { v throws(ValueError) in try V.integer(v, in: 0...1000) }

        case ("Log", "SegmentSize"): try set(\.log.segmentSize) { v throws(ValueError) in try size(v, in: 4096...Int.max) }
        case ("Log", "SnapshotEvery"): try set(\.log.snapshotEvery) { v throws(ValueError) in try V.integer(v, in: positive) }
        case ("Log", "UserEventRate"): try set(\.log.userEventRate) { v throws(ValueError) in try V.integer(v, in: 0...1_000_000) }
        case ("Log", "UserEventBurst"): try set(\.log.userEventBurst) { v throws(ValueError) in try V.integer(v, in: 1...100_000_000) }
        case ("Log", "ReserveSpace"): try set(\.log.reserveSpace) { v throws(ValueError) in try size(v, in: 0...Int.max) }

        case ("Secrets", "KeyFile"): try set(\.secrets.keyFile) { v throws(ValueError) in try V.absolutePath(v) }
        // A secret travels base64 in one request line (8192 bytes): at most 6000 bytes fit.
        case ("Secrets", "MaxSecretBytes"): try set(\.secrets.maxSecretBytes) { v throws(ValueError) in try V.integer(v, in: 1...6000) }
        case ("Secrets", "MaxRightsPerUser"): try set(\.secrets.maxRightsPerUser) { v throws(ValueError) in try V.integer(v, in: 1...100_000) }

        case ("DBus", "Serve"): try set(\.dbus.serve, V.boolean)
        case ("DBus", "Bus"): try set(\.dbus.bus, dbusAddress)

        case ("Keyring", "ReleaseLoginPassword"): try set(\.keyring.releaseLoginPassword, V.boolean)
        case ("Keyring", "Services"): try set(\.keyring.services, pamServices)

        default: return false
        }
        return true
    }

    // MARK: Values particular to one key.

    private static func positiveTimeSpan(_ text: String) throws(ValueError) -> Int64 {
        let span = try ConfigurationValue.timeSpan(text)
        guard span > 0 else { throw ValueError(expected: "a time span greater than 0, such as 10 or 1min") }
        return span
    }

    private static func backoffList(_ text: String) throws(ValueError) -> [Int64] {
        // Each word is one span, so a span with units is written without spaces (`1min30s`).
        var spans: [Int64] = []
        for word in ConfigurationValue.list(text) {
            do throws(ValueError) {
                spans.append(try positiveTimeSpan(word))
            } catch {
                throw ValueError(expected: "a list of time spans greater than 0, separated by spaces, such as 60 300 15min 1h")
            }
        }
        return spans
    }

    private static func size(_ text: String, in range: ClosedRange<Int>) throws(ValueError) -> Int {
        let size = try ConfigurationValue.size(text)
        guard range.contains(size) else {
            if range.upperBound < Int.max {
                throw ValueError(expected: "a size of \(range.lowerBound) to \(range.upperBound) bytes, such as 512 or 1K")
            }
            throw ValueError(expected: "a size of at least \(range.lowerBound) bytes, such as 64K or 1M")
        }
        return size
    }

    /// A D-Bus address as sd-bus takes it ("unix:path=/run/x/bus"): printable,
    /// no spaces, a transport before a colon.
    private static func dbusAddress(_ text: String) throws(ValueError) -> String? {
        guard text.utf8.count <= 1024, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }),
              let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw ValueError(expected: "a D-Bus address such as unix:path=/run/localauthd/bus")
        }
        return text
    }

    private static func biometryType(_ text: String) throws(ValueError) -> BiometryType {
        guard let type = BiometryType(wireName: text) else {
            throw ValueError(expected: "one of " + BiometryType.allCases.map(\.wireName).joined(separator: ", "))
        }
        return type
    }

    private static func named<T: RawRepresentable & CaseIterable>(
        _ text: String, _ type: T.Type
    ) throws(ValueError) -> T where T.RawValue == String {
        guard let value = T(rawValue: text) else {
            throw ValueError(expected: "one of " + T.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }

    /// `no`, `agent` or `yes` (the booleans' spellings for no and yes, as
    /// before `agent` existed: S-68).
    private static func clientPrompts(_ text: String) throws(ValueError) -> ClientPrompts {
        if text == "agent" { return .agent }
        do {
            return try ConfigurationValue.boolean(text) ? .yes : .no
        } catch {
            throw ValueError(expected: "no, agent or yes")
        }
    }

    /// PAM service names as PAM_SERVICE carries them (S-42's bound: 1 to
    /// 256 bytes, no control character; no space, which separates them).
    private static func pamServices(_ text: String) throws(ValueError) -> [String] {
        let names = ConfigurationValue.list(text)
        guard !names.isEmpty, names.allSatisfy({ name in
            name.utf8.count <= 256 && name.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7f }
        }) else {
            throw ValueError(expected: "PAM service names separated by spaces, such as login gdm-password")
        }
        return names
    }

    private static func groupName(_ text: String) throws(ValueError) -> String? {
        guard !text.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == 0 }) else {
            throw ValueError(expected: "a group name or number, without spaces")
        }
        return text
    }

    // MARK: Lines.

    private static func isBlank(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0B || b == 0x0C
    }

    private static func trimmed(_ line: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        var line = line
        while let first = line.first, isBlank(first) { line = line.dropFirst() }
        while let last = line.last, isBlank(last) { line = line.dropLast() }
        return line
    }

    /// Cuts an inline comment: whitespace, then `#`.
    private static func withoutInlineComment(
        _ line: Substring.UTF8View.SubSequence
    ) -> Substring.UTF8View.SubSequence {
        var previous: UInt8 = 0
        for index in line.indices {
            let b = line[index]
            if b == UInt8(ascii: "#") && isBlank(previous) { return line[..<index] }
            previous = b
        }
        return line
    }
}
