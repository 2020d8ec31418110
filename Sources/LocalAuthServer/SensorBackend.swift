// Where biometric readings come from (S-34: from the sensor backend, never
// from the client that asked). The core only sees `Command.sensor`; a backend
// is told when a user's biometric prompt starts and stops waiting, and hands
// readings to the loop. The simulated backend takes them from an
// administrator's `sensor` verb; FprintdSensor (S-43) from fprintd over
// D-Bus, its bus socket being one more fd of the loop.
import LocalAuthCore
import LocalAuthSystem

protocol SensorBackend: AnyObject {
    var name: String { get }
    /// Readings come from the admin `sensor` verb and templates from `enroll`.
    var isSimulated: Bool { get }
    /// A biometric prompt of `uid` now waits for a reading.
    func scanRequested(uid: UserID)
    /// No biometric prompt of `uid` waits any more.
    func scanCancelled(uid: UserID)
    /// A biometric PROMPT line for `uid`: true when the backend keeps it
    /// until the scan starts (S-43: one reader, users in arrival order).
    func holdPrompt(uid: UserID, bytes: [UInt8], connection: Connection.ID) -> Bool
    /// Whether the backend can be asked for a user's enrolled fingers now
    /// (S-43: a check then waits for the answer, EnrollmentParking.swift).
    var canListFingers: Bool { get }
    /// Asks for `uid`'s enrolled fingers; whatever happens, the backend
    /// then calls `ServerCore.enrollmentQueryEnded(uid, query:)` (a second end
    /// of the same query is ignored there, and one that never comes is
    /// ended by the server's limit).
    func listFingers(_ uid: UserID, query: UInt64)
    /// Extra `status` fields (PROTOCOL.md v1.1 additions, S-43).
    var statusFields: [(String, String)] { get }
    /// Loop hooks: the bus fd was ready, a tick, the end of a turn,
    /// passwd answers arrived, clean stop.
    func busReady()
    func tick()
    func endOfTurn()
    func shutdown()
}

extension SensorBackend {
    func holdPrompt(uid: UserID, bytes: [UInt8], connection: Connection.ID) -> Bool { false }
    var canListFingers: Bool { false }
    func listFingers(_ uid: UserID, query: UInt64) {}
    var statusFields: [(String, String)] { [("backend", name), ("reader", ""), ("reader-present", "true")] }
    func busReady() {}
    func tick() {}
    func endOfTurn() {}
    func shutdown() {}
}

/// `[Biometry] Backend=simulated`: an administrator is the sensor.
final class SimulatedSensor: SensorBackend {
    let name = "simulated"
    let isSimulated = true
    private(set) var scanning: Set<UserID> = []

    func scanRequested(uid: UserID) { scanning.insert(uid) }
    func scanCancelled(uid: UserID) { scanning.remove(uid) }
}

extension ServerCore {
    /// A reading from a real sensor for `uid`'s waiting prompt: the same
    /// command as the `sensor` verb's, so a no-match is durable before any
    /// byte that reveals it (S-40, the reply gate).
    func fprintdReading(uid: UserID, _ reading: SensorReading) {
        run(.sensor(uid: uid, reading: reading), connection: nil, tag: nil, now: now)
    }

    /// fprintd listed `fingers` for `uid` (S-43): recorded when they differ.
    func fprintdListed(uid: UserID, fingers: [String]) {
        run(.fingersListed(uid: uid, fingers: fingers, by: daemonUID, domainState: randomHex(bytes: 16)),
            connection: nil, tag: nil, now: now)
    }

    /// The backend's reader appeared (nil) or went (why): checks answer
    /// biometryNotAvailable with that message meanwhile.
    func sensorProblemChanged(_ problem: String?) {
        authenticator.setSensorProblem(problem)
        if let problem { journal(.notice, "The fingerprint reader is not available: \(problem)") }
        else { journal(.notice, "The fingerprint reader is available.") }
    }

    /// Tells the sensor backend whether `uid` has a biometric prompt waiting,
    /// after the events of a command were folded.
    func updateScan(_ uid: UserID) {
        let waiting: Bool
        // A biometric or a combined prompt (S-60): its passcode half never
        // stops the scan; the end of its biometric half does.
        if let holder = authenticator.state.users[uid]?.promptHolder,
           authenticator.state.contexts[holder]?.evaluation?.isScanning == true {
            waiting = true
        } else {
            waiting = false
        }
        if waiting && !scanning.contains(uid) {
            scanning.insert(uid)
            sensorBackend.scanRequested(uid: uid)
        } else if !waiting && scanning.contains(uid) {
            scanning.remove(uid)
            sensorBackend.scanCancelled(uid: uid)
        }
    }
}
