// Where biometric readings come from (S-34: from the sensor backend, never
// from the client that asked). The core only sees `Command.sensor`; a backend
// is told when a user's biometric prompt starts and stops waiting, and hands
// readings to the loop. The simulated backend takes them from an
// administrator's `sensor` verb. An fprintd backend would start VerifyStart
// on `scanRequested`, stop on `scanCancelled`, and post each VerifyStatus
// (match / no-match / retry / disconnected) to the loop through an eventfd —
// no change to the core or to the verbs.
import LocalAuthCore

protocol SensorBackend: AnyObject {
    var name: String { get }
    /// Readings come from the admin `sensor` verb and templates from `enroll`.
    var isSimulated: Bool { get }
    /// A biometric prompt of `uid` now waits for a reading.
    func scanRequested(uid: UserID)
    /// No biometric prompt of `uid` waits any more.
    func scanCancelled(uid: UserID)
}

/// `[Biometry] Backend=simulated`: an administrator is the sensor.
final class SimulatedSensor: SensorBackend {
    let name = "simulated"
    let isSimulated = true
    private(set) var scanning: Set<UserID> = []

    func scanRequested(uid: UserID) { scanning.insert(uid) }
    func scanCancelled(uid: UserID) { scanning.remove(uid) }
}

extension Server {
    /// Tells the sensor backend whether `uid` has a biometric prompt waiting,
    /// after the events of a command were folded.
    func updateScan(_ uid: UserID) {
        let waiting: Bool
        if let holder = authenticator.state.users[uid]?.promptHolder,
           case .biometric? = authenticator.state.contexts[holder]?.evaluation?.phase {
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
