// The core's side of the sensor (SensorPrompts.swift): which prompts wait
// for a reading, told to a real backend as `.sensor` actions, and what the
// backend reports back, taken as inputs. A reading becomes the same command
// as the `sensor` verb's, so a no-match is durable before any byte that
// reveals it (S-40, the reply gate).
import LocalAuthCore

extension ServerCore {
    /// Backend=fprintd: the shell made the reader's backend (it owns its bus).
    func useSensor(name: String, problem: String?) {
        sensor.useReal(name: name, problem: problem)
        authenticator.setSensorProblem(problem)
    }

    /// What a real backend reports, in order.
    func sensorReported(_ report: SensorReport) {
        switch report {
        case .reading(let uid, let reading):
            run(.sensor(uid: uid, reading: reading), connection: nil, tag: nil, now: now)
        case .fingersListed(let uid, let fingers):
            // S-43: recorded when they differ.
            run(.fingersListed(uid: uid, fingers: fingers, by: daemonUID, domainState: randomHex(bytes: 16)),
                connection: nil, tag: nil, now: now)
        case .fingersQueryEnded(let uid, let query):
            enrollmentQueryEnded(uid, query: query)
        case .fingersQueriesLost:
            enrollmentQueriesLost()
        case .problem(let problem):
            _ = sensor.apply(report)
            // Checks answer biometryNotAvailable with that message meanwhile.
            authenticator.setSensorProblem(problem)
            if let problem { journal(.notice, "The fingerprint reader is not available: \(problem)") }
            else { journal(.notice, "The fingerprint reader is available.") }
        case .canListFingers, .readerName, .scanShown, .scanEnded, .promptsDropped:
            if let held = sensor.apply(report), connections.contains(held.connection) {
                send(held.bytes, to: held.connection)
            }
        }
    }

    /// Tells the backend whether `uid` has a biometric prompt waiting,
    /// after the events of a command were folded.
    func updateScan(_ uid: UserID) {
        // A biometric or a combined prompt (S-60): its passcode half never
        // stops the scan; the end of its biometric half does.
        let waiting: Bool
        if let holder = authenticator.state.users[uid]?.promptHolder,
           authenticator.state.contexts[holder]?.evaluation?.isScanning == true {
            waiting = true
        } else {
            waiting = false
        }
        if let command = sensor.update(uid, waiting: waiting) { actions.append(.sensor(command)) }
    }

    /// Users whose biometric prompt the backend scans for.
    package var scanning: Set<UserID> { sensor.scanning }
}
