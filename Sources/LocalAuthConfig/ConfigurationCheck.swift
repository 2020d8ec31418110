// What `localauthd --test-config` reports: the configuration the files add
// up to, every problem in them (each with its file and line, the scan does
// not stop at the first), and where each key's value came from. Rendered as
// the INI text the daemon would accept, so it can be diffed or kept.

public struct ConfigurationCheck: Sendable {
    public var configuration: DaemonConfiguration
    /// Every problem, in file and line order. Any problem stops the daemon.
    public var problems: [ConfigurationError] = []
    /// The assignment in effect for each key set in a file (the last one).
    public var assignments: [Assignment] = []

    public init(configuration: DaemonConfiguration) { self.configuration = configuration }

    /// `[Section]` blocks with every known key: `Key=value  # file:line` for
    /// keys set in a file, `Key=value  # overrides` for those a flag set
    /// (`overrides`: key -> where, e.g. "--socket"), `#Key=default` for the rest.
    public func text(overrides: [String: String] = [:]) -> String {
        var text = ""
        for (section, keys) in ConfigurationParser.knownKeys {
            text += (text.isEmpty ? "" : "\n") + "[\(section)]\n"
            for key in keys {
                let name = section + "." + key
                let value = EffectiveValue.render(section: section, key: key, configuration)
                if let origin = overrides[name] {
                    text += "\(key)=\(value ?? "")  # \(origin)\n"
                } else if let assignment = assignments.last(where: { $0.section == section && $0.key == key }) {
                    text += "\(key)=\(value ?? assignment.value)  # \(assignment.fileName):\(assignment.line)\n"
                } else {
                    text += "#\(key)=\(value ?? "")\n"
                }
            }
        }
        return text
    }
}

/// One `Key=value` line that took effect.
public struct Assignment: Sendable, Equatable {
    public var section: String
    public var key: String
    /// As written (trimmed, inline comment cut).
    public var value: String
    public var fileName: String
    public var line: Int
}

/// A value in the spelling the parser reads back. Keys without a renderer
/// here (added later) are shown as written in their file.
enum EffectiveValue {
    static func render(section: String, key: String, _ c: DaemonConfiguration) -> String? {
        switch (section, key) {
        case ("Daemon", "Socket"): return c.daemon.socket
        case ("Daemon", "StateDirectory"): return c.daemon.stateDirectory
        case ("Daemon", "AdminGroup"): return c.daemon.adminGroup ?? ""
        case ("Daemon", "AuditGroup"): return c.daemon.auditGroup ?? ""
        case ("Daemon", "MaxConnections"): return String(c.daemon.maxConnections)
        case ("Daemon", "MaxConnectionsPerUser"): return String(c.daemon.maxConnectionsPerUser)
        case ("Daemon", "MaxContextsPerConnection"): return String(c.daemon.maxContextsPerConnection)
        case ("Daemon", "MaxPendingBytes"): return String(c.daemon.maxPendingBytes)
        case ("Daemon", "IdleLineTimeoutSec"): return span(c.daemon.idleLineTimeout)
        case ("Daemon", "ExitOnIdleSec"): return span(c.daemon.exitOnIdle)
        case ("Biometry", "Type"): return c.biometry.type.wireName
        case ("Biometry", "Backend"): return c.biometry.backend.rawValue
        case ("Biometry", "AttemptsPerEvaluation"): return c.biometry.attemptsPerEvaluation.map(String.init) ?? ""
        case ("Biometry", "LockoutThreshold"): return String(c.biometry.lockoutThreshold)
        case ("Biometry", "PromptTimeoutSec"): return span(c.biometry.promptTimeout)
        case ("Biometry", "PasscodeRequiredAfterSec"): return span(c.biometry.passcodeRequiredAfter)
        case ("Biometry", "PasscodeRequiredAfterBoot"): return c.biometry.passcodeRequiredAfterBoot ? "yes" : "no"
        case ("Passcode", "Backend"): return c.passcode.backend.rawValue
        case ("Passcode", "DelayAfterFailures"): return String(c.passcode.delayAfterFailures)
        case ("Passcode", "BackoffSec"): return c.passcode.backoff.map(span).joined(separator: " ")
        case ("Passcode", "MaxPasscodeFailures"): return String(c.passcode.maxPasscodeFailures)
        case ("Log", "SegmentSize"): return String(c.log.segmentSize)
        case ("Log", "SnapshotEvery"): return String(c.log.snapshotEvery)
        case ("DBus", "Serve"): return c.dbus.serve ? "yes" : "no"
        case ("DBus", "Bus"): return c.dbus.bus ?? ""
        case ("Keyring", "ReleaseLoginPassword"): return c.keyring.releaseLoginPassword ? "yes" : "no"
        case ("Keyring", "Services"): return c.keyring.services.joined(separator: " ")
        default: return nil
        }
    }

    /// Microseconds as seconds (`1.5` when not whole), which timeSpan reads back.
    static func span(_ micros: Int64) -> String {
        let whole = micros / 1_000_000, fraction = micros % 1_000_000
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 6 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }
}
