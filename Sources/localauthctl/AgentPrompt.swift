// One PROMPT line a session agent receives (PROTOCOL.md 1.3), and how the
// terminal agent shows it: who asks (the daemon's facts, and what the agent
// read of that very process), then the app's words under "It says", every
// app-supplied string escaped, so that a reason cannot pose as the system or
// move the cursor (S-69).
import LocalAuthProtocol

struct AgentPrompt {
    enum Kind: String {
        case biometric, passcode
        case combined = "biometric-or-passcode"
    }

    let request: String
    let kind: Kind
    let attempt: Int
    let biometry: String
    let attemptsLeft: Int?
    let retryAfter: Int?
    let message: String?
    let appUID: UInt32
    let appPID: Int32
    let appProcess: UInt64?
    let reason: String
    let cancel: String
    let fallback: String?

    init?(_ response: Response) {
        let values = response.arguments
        guard response.status == .prompt, let request = values.value(for: "request"),
              let kind = values.value(for: "kind").flatMap(Kind.init(rawValue:)),
              let uid = values.value(for: "app-uid").flatMap({ UInt32($0) }),
              let pid = values.value(for: "app-pid").flatMap({ Int32($0) }) else { return nil }
        self.request = request
        self.kind = kind
        attempt = values.value(for: "attempt").flatMap { Int($0) } ?? 1
        biometry = values.value(for: "biometry") ?? "touchID"
        attemptsLeft = values.value(for: "attempts-left").flatMap { Int($0) }
        retryAfter = values.value(for: "retry-after").flatMap { Int($0) }
        message = values.value(for: "message")
        appUID = uid
        appPID = pid
        appProcess = values.value(for: "app-process").flatMap { UInt64($0) }
        reason = values.value(for: "reason") ?? ""
        cancel = values.value(for: "cancel") ?? "Cancel"
        fallback = values.value(for: "fallback")
    }

    /// Whether the prompt takes the password (typed with echo off).
    var takesPassword: Bool { kind != .biometric }

    /// The lines that introduce a request: who asks, then its words.
    static func introduction(_ identity: AppIdentity, reason: String) -> String {
        var text = "\nAuthentication is requested by:\n"
        for line in identity.lines { text += "  " + line + "\n" }
        text += "  It says: \"" + DisplayText.escaped(reason, keepingLineFeeds: false) + "\"\n"
        return text
    }

    /// What to do now, ending with the password prompt when it takes one.
    var instructions: String {
        var text = ""
        if let message { text += DisplayText.escaped(message, keepingLineFeeds: false) + "\n" }
        if let retryAfter { text += "Password entry is disabled for \(retryAfter) s.\n" }
        let cancel = DisplayText.escaped(self.cancel, keepingLineFeeds: false)
        switch kind {
        case .biometric:
            text += "\(action) (attempt \(attempt)); Ctrl-C: \(cancel)"
            if let fallback { text += "; Enter: \(DisplayText.escaped(fallback, keepingLineFeeds: false))" }
            text += "\n"
        case .passcode:
            text += "Password\(left) (empty line: \(cancel)): "
        case .combined:
            text += "Password or \(action.lowercased())\(left) (empty line: \(cancel)): "
        }
        return text
    }

    private var action: String {
        switch biometry {
        case "faceID": return "Look at the camera"
        case "opticID": return "Look at the sensor"
        default: return "Touch the sensor"
        }
    }

    private var left: String { attemptsLeft.map { " (\($0) attempts left)" } ?? "" }

    /// A DONE line's `result=`, as the terminal says it.
    static func outcome(_ result: String) -> String {
        switch result {
        case "success": return "Authenticated."
        case "userCancel": return "Cancelled."
        case "systemCancel": return "The request was ended (timed out, or replaced by another)."
        default: return "Not authenticated (\(DisplayText.escaped(result, keepingLineFeeds: false)))."
        }
    }
}
