// The errors of the log. Messages follow the house grammar
// "Failed to <verb> <object>: <error>" and, when the log cannot be trusted,
// name the commands that fix it (S-41).

import LocalAuthSystem

/// Why the writer stopped: everything from `firstNotDurable` on is not durable
/// and will never be acknowledged by this writer.
public struct WriteFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var firstNotDurable: UInt64
    public var cause: SystemError

    public var description: String {
        "Failed to make the event log durable from seq \(firstNotDurable): \(cause)"
    }
}

public enum LogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A syscall failed while opening, reading, recovering or repairing.
    case io(SystemError)
    /// The log cannot be trusted; the daemon must not start.
    case untrustworthy(Corruption)
    /// The writer has failed; no append is accepted any more.
    case writeFailed(WriteFailure)
    /// The log is closed (or read-only).
    case closed
    case payloadTooLarge(Int)
    /// A position or seq that holds no (valid) record.
    case noRecord(String)

    public var description: String {
        switch self {
        case .io(let error): "Failed to access the event log: \(error)"
        case .untrustworthy(let corruption):
            "Failed to open the event log: \(corruption). The log cannot be trusted; "
                + "run `localauthctl verify` to see the first bad record and `localauthctl repair` "
                + "(daemon stopped) to cut the log after the last trustworthy record."
        case .writeFailed(let failure): failure.description
        case .closed: "Failed to append to the event log: it is closed"
        case .payloadTooLarge(let size): "Failed to append to the event log: payload of \(size) bytes is too large"
        case .noRecord(let what): "Failed to read the event log: no record at \(what)"
        }
    }
}
