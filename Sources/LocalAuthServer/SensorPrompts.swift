// The sensor as the core sees it (S-34: readings come from the sensor
// backend, never from the client that asked), a value with no I/O. Under
// `[Biometry] Backend=simulated` an administrator's `sensor` verb is the
// reader and this only keeps which users' prompts wait for a reading. Under
// a real reader (fprintd, S-43) the backend is shell-side I/O: the core
// tells it which users' biometric prompts wait (`SensorCommand`, performed
// as `.sensor`) and asks for a user's enrolled fingers; the backend reports
// back (`SensorReport`, an input). One reader serves every user, so a
// biometric PROMPT line is held here until the backend reports that its
// user's scan started (then the reader is that user's), and the reader's
// state (`problem`, `readerName`, whether fingers can be listed) is kept
// here as last reported, for the rules, `status` and S-43's parking.
import LocalAuthCore

/// What the core asks of a real sensor backend (the shell performs it).
package enum SensorCommand: Equatable {
    /// A biometric prompt of `uid` waits for a reading: scan for it.
    case scan(UserID)
    /// No biometric prompt of `uid` waits any more: stop its scan.
    case stopScan(UserID)
    /// List `uid`'s enrolled fingers; whatever happens, the backend reports
    /// `.fingersQueryEnded(uid, query)` (the core ignores a second end and
    /// ends one that never comes at EnrollmentRefresh.limit).
    case listFingers(UserID, query: UInt64)
    /// S-63: the system is going to sleep (true: the scans that stop now
    /// give the reader back at the resume, as fprintd suspends its device
    /// meanwhile) or woke up (false).
    case systemSleeping(Bool)
}

/// What a real sensor backend reports (`ServerCore.sensorReported`), in the order it happened.
enum SensorReport: Equatable {
    /// A reading for `uid`'s waiting prompt.
    case reading(UserID, SensorReading)
    /// The backend listed `uid`'s fingers (S-43: recorded when they differ).
    case fingersListed(UserID, [String])
    /// A query for `uid`'s fingers ended (answered, failed or given up).
    case fingersQueryEnded(UserID, query: UInt64)
    /// The backend lost its bus: no query in flight will end by itself.
    case fingersQueriesLost
    /// Whether the backend can be asked for fingers now.
    case canListFingers(Bool)
    /// The reader appeared (nil) or went (why).
    case problem(String?)
    /// The reader's name, for `status`.
    case readerName(String?)
    /// `uid`'s scan started (the reader is theirs): its PROMPT lines go out.
    case scanShown(UserID)
    /// `uid`'s started scan ended (the next PROMPT line waits for a new one).
    case scanEnded(UserID)
    /// The reader failed under `uid`'s prompt (nil: everyone's): the
    /// PROMPT lines held for it are dropped (its readings follow).
    case promptsDropped(UserID?)
}

struct SensorPrompts {
    /// `[Biometry] Backend=`: "simulated" (readings from the `sensor` verb) or a real one.
    private(set) var name = "simulated"
    /// A stored flag: the hot can-evaluate path reads it with no call.
    private(set) var isSimulated = true
    /// Users whose biometric prompt the backend scans for.
    private(set) var scanning: Set<UserID> = []
    /// Under a real reader: the user whose scan started, and the PROMPT
    /// lines of users whose scan has not (one per user: the newest).
    private var shown: UserID?
    private var held: [UserID: (connection: Connection.ID, bytes: [UInt8])] = [:]
    /// The reader as last reported.
    private(set) var canListFingers = false
    private(set) var problem: String?
    private(set) var readerName: String?

    /// A real backend (the shell made it): its name and its first problem.
    mutating func useReal(name: String, problem: String?) {
        self.name = name
        isSimulated = false
        self.problem = problem
    }

    /// Whether `uid` has a biometric prompt waiting now: the command for
    /// the backend when that changed (nil under the simulated sensor, which
    /// needs none).
    mutating func update(_ uid: UserID, waiting: Bool) -> SensorCommand? {
        if waiting, scanning.insert(uid).inserted { return isSimulated ? nil : .scan(uid) }
        if !waiting, scanning.remove(uid) != nil { return stopped(uid) }
        return nil
    }

    /// Every scan stops (the log failed: no reading can be recorded).
    mutating func stopAll() -> [SensorCommand] {
        let stopping = scanning.sorted()
        scanning.removeAll()
        return stopping.compactMap { stopped($0) }
    }

    private mutating func stopped(_ uid: UserID) -> SensorCommand? {
        held[uid] = nil
        if shown == uid { shown = nil }
        return isSimulated ? nil : .stopScan(uid)
    }

    /// A PROMPT line of a scanning prompt for `uid`: true when it is held
    /// until the reader is `uid`'s (S-43: one reader, users in arrival order).
    mutating func hold(_ uid: UserID, _ bytes: [UInt8], for connection: Connection.ID) -> Bool {
        if isSimulated || shown == uid { return false }
        held[uid] = (connection, bytes)
        return true
    }

    /// What a report changes here; for `.scanShown`, the PROMPT line held
    /// for that user, to send now.
    mutating func apply(_ report: SensorReport) -> (connection: Connection.ID, bytes: [UInt8])? {
        switch report {
        case .canListFingers(let can): canListFingers = can
        case .problem(let why): problem = why
        case .readerName(let name): readerName = name
        case .scanShown(let uid):
            shown = uid
            return held.removeValue(forKey: uid)
        case .scanEnded(let uid): if shown == uid { shown = nil }
        case .promptsDropped(let uid?): held[uid] = nil
        case .promptsDropped(nil): held.removeAll()
        case .reading, .fingersListed, .fingersQueryEnded, .fingersQueriesLost: break
        }
        return nil
    }

    /// `status`'s extra fields (PROTOCOL.md v1.1 additions, S-43).
    var statusFields: [(String, String)] {
        isSimulated ? [("backend", name), ("reader", ""), ("reader-present", "true")]
            : [("backend", name), ("reader", readerName ?? ""), ("reader-present", String(problem == nil))]
    }
}
