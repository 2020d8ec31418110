// What fprintd's D-Bus messages mean to the daemon (S-43), as pure
// functions of the message: the VerifyStatus mapping, the enrolled
// fingers, the default device, NameOwnerChanged. Every message is hostile
// until read here: a wrong signature, an unknown status or a finger name
// that is not one of fprintd's ten reads as "nothing" (nil or dropped),
// never as a reading. The hostile tests feed these malformed messages.
import LocalAuthCore
import LocalAuthSystem

enum FprintdReplies {
    static let service = "net.reactivated.Fprint"
    static let managerPath = "/net/reactivated/Fprint/Manager"
    static let managerInterface = "net.reactivated.Fprint.Manager"
    static let deviceInterface = "net.reactivated.Fprint.Device"
    /// fprintd's answer to a Release of a device the caller does not hold.
    static let notClaimed = "net.reactivated.Fprint.Error.ClaimDevice"

    /// fprintd's finger names (its `fingers[]`), the only templates it has.
    static let fingerNames: Set<String> = [
        "left-thumb", "left-index-finger", "left-middle-finger", "left-ring-finger", "left-little-finger",
        "right-thumb", "right-index-finger", "right-middle-finger", "right-ring-finger", "right-little-finger",
    ]

    /// A VerifyStatus signal: the reading it gives and whether fprintd's
    /// verification ended with it. nil: not a VerifyStatus we understand
    /// (ignored; it counts nothing).
    static func verifyStatus(_ message: DBusMessage) -> (reading: SensorReading, done: Bool)? {
        guard let values = message.read([.string, .boolean]), let result = values[0].string,
              let done = values[1].boolean, let reading = reading(result) else { return nil }
        return (reading, done)
    }

    /// S-43's table. Retry statuses say why, in the words a prompt shows.
    static func reading(_ result: String) -> SensorReading? {
        switch result {
        case "verify-match": return .match
        case "verify-no-match": return .noMatch
        case "verify-retry-scan": return .retry(message: "Scan your finger again.")
        case "verify-swipe-too-short": return .retry(message: "Swipe was too short; try again.")
        case "verify-finger-not-centered": return .retry(message: "Finger not centered; try again.")
        case "verify-remove-and-retry": return .retry(message: "Remove your finger and try again.")
        case "verify-disconnected": return .disconnect
        case "verify-unknown-error": return .error(message: "The fingerprint reader failed.")
        default: return nil
        }
    }

    /// ListEnrolledFingers' reply: the fingers, sorted, known names only
    /// (anything else, e.g. odd bytes, is dropped: it never reaches the log).
    /// fprintd answers "none" with the error NoEnrolledPrints. nil: the
    /// reply says nothing about the set (another error, a wrong shape).
    static func enrolledFingers(_ message: DBusMessage) -> [String]? {
        if let error = message.error {
            return error.name == "net.reactivated.Fprint.Error.NoEnrolledPrints" ? [] : nil
        }
        guard let names = message.readStringArray(limit: 64) else { return nil }
        return Array(Set(names.filter { fingerNames.contains($0) })).sorted()
    }

    /// GetDefaultDevice's reply: the device's object path, or nil.
    static func devicePath(_ message: DBusMessage) -> String? {
        guard message.error == nil, let values = message.read([.objectPath]), let path = values[0].string,
              path.hasPrefix("/net/reactivated/Fprint/Device/") else { return nil }
        return path
    }

    /// A Properties.Get reply holding a string (the reader's `name`),
    /// printable ASCII only and bounded (it is shown by `status`).
    static func readerName(_ message: DBusMessage) -> String? {
        guard message.error == nil, let name = message.readVariant(.string)?.string else { return nil }
        let printable = String(decoding: name.utf8.prefix(128).filter { $0 >= 0x20 && $0 < 0x7f }, as: UTF8.self)
        return printable.isEmpty ? nil : printable
    }

    /// ObjectManager's InterfacesRemoved ("oas"): the object removed.
    static func removedObject(_ message: DBusMessage) -> String? {
        message.leadingObjectPath(signature: "oas")
    }

    /// NameOwnerChanged for fprintd's name: whether it now has an owner;
    /// nil for any other name or shape.
    static func fprintdOwnerChanged(_ message: DBusMessage) -> Bool? {
        guard let values = message.read([.string, .string, .string]), values[0].string == service,
              let newOwner = values[2].string else { return nil }
        return !newOwner.isEmpty
    }

    /// Why a failed call makes the reader unavailable, in words for
    /// `can-evaluate` and `status`.
    static func problem(_ error: (name: String, message: String)) -> String {
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return "fprintd is not running."
        case "net.reactivated.Fprint.Error.NoSuchDevice":
            return "No fingerprint reader is connected."
        case "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.NoReply":
            // Also what a call gets when fprintd exits before answering.
            return "fprintd did not answer."
        case "org.freedesktop.DBus.Error.AccessDenied", "net.reactivated.Fprint.Error.PermissionDenied":
            return "fprintd refused the daemon (check the polkit rule localauthd-fprintd.rules)."
        default:
            return "The fingerprint reader is not available (\(error.name))."
        }
    }
}
