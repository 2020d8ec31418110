// status, enrollment, sensor readings, unlock reports and resets
// (SEMANTICS §7). Who may call what is checked in the verb table and by
// `targetUID`, and what only root may do by `refusedAsRootOnly` (S-52); the
// core records each act with the caller's uid.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    func status(_ request: Request, _ connection: Connection.ID) {
        guard let uid = targetUID(request, connection) else { return }
        let status = authenticator.state.status(uid, now: now)
        replyOK(connection, request.tag, [
            ("uid", String(uid)), ("biometry", status.biometry.wireName), ("enrolled", String(status.templates)),
            ("passcode-set", String(status.passcodeSet)), ("biometric-failures", String(status.biometricFailures)),
            ("locked-out", String(status.lockedOut)), ("passcode-failures", String(status.passcodeFailures)),
            ("retry-after", String(status.retryAfter)), ("admin-locked", String(status.adminLocked)),
            ("contexts", String(status.contexts)),
        ] + sensor.statusFields + [
            // PROTOCOL.md 1.2 (S-62): LAEnvironment's builtInSensorInaccessible.
            ("sensor-inaccessible", String(whereabouts.inaccessible(reader: sensor.readerName))),
        ] + FailureNotice.fields(status.failuresSinceSignIn))
    }

    func enroll(_ request: Request, _ connection: Connection.ID) {
        guard requireSimulatedSensor(request, connection),
              let uid = targetUID(request, connection, required: true),
              !refusedAsRootOnly(request, connection, subject: uid) else { return }
        let existing = authenticator.state.user(uid).templates
        var template = request.arguments.value(for: "template") ?? ""
        if request.arguments.value(for: "template") == nil {
            var number = existing.count + 1
            while existing.contains("template-\(number)") { number += 1 }
            template = "template-\(number)"
        }
        let token = randomHex(bytes: 16)
        let outcome = run(.enroll(uid: uid, template: template, by: peer(of: connection).uid, domainState: token),
                          connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        let user = authenticator.state.user(uid)
        replyOK(connection, request.tag, [("templates", String(user.templates.count)), ("domain-state", user.domainState.description)])
    }

    func unenroll(_ request: Request, _ connection: Connection.ID) {
        guard requireSimulatedSensor(request, connection),
              let uid = targetUID(request, connection, required: true),
              !refusedAsRootOnly(request, connection, subject: uid) else { return }
        let outcome = run(.unenroll(uid: uid, template: request.arguments.value(for: "template"), by: peer(of: connection).uid,
                                    domainState: randomHex(bytes: 16)),
                          connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        replyOK(connection, request.tag, [("templates", String(authenticator.state.user(uid).templates.count))])
    }

    func sensor(_ request: Request, _ connection: Connection.ID) {
        guard requireSimulatedSensor(request, connection),
              let uid = targetUID(request, connection, required: true),
              !refusedAsRootOnly(request, connection, subject: uid, reachesOnBehalfPrompt: promptIsOnBehalf(of: uid))
        else { return }
        let reading: SensorReading
        switch request.arguments.value(for: "result") {
        case "match": reading = .match
        case "nomatch": reading = .noMatch
        case "retry": reading = .retry(message: request.arguments.value(for: "message") ?? "Try again.")
        case "disconnect": reading = .disconnect
        case nil: return reply(connection, request.tag, ProtocolError(.missingArgument, "result= is required."))
        case let other?:
            return reply(connection, request.tag, ProtocolError(.badArgument,
                "result=\(other) is not one of match, nomatch, retry, disconnect."))
        }
        let outcome = run(.sensor(uid: uid, reading: reading), connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        replyOK(connection, request.tag)
    }

    /// Readings and templates come through the protocol only with the
    /// simulated backend; a real sensor has its own.
    private func requireSimulatedSensor(_ request: Request, _ connection: Connection.ID) -> Bool {
        guard sensor.isSimulated else {
            // S-43: fprintd has its own tools for templates and readings.
            reply(connection, request.tag, ProtocolError(.unavailable,
                "\(request.verb) needs the simulated sensor; this daemon uses \(sensor.name): "
                + "enroll fingers with fprintd-enroll and remove them with fprintd-delete."))
            return false
        }
        return true
    }

    func unlocked(_ request: Request, _ connection: Connection.ID) {
        guard let uid = targetUID(request, connection, required: true),
              !refusedAsRootOnly(request, connection, subject: uid) else { return }
        adminAct(.reportUnlock(uid: uid, by: peer(of: connection).uid), request, connection)
    }

    func reset(_ request: Request, _ connection: Connection.ID) {
        guard let uid = targetUID(request, connection, required: true),
              !refusedAsRootOnly(request, connection, subject: uid) else { return }
        adminAct(.reset(uid: uid, by: peer(of: connection).uid), request, connection)
    }

    private func adminAct(_ command: Command, _ request: Request, _ connection: Connection.ID) {
        guard events(run(command, connection: connection, tag: request.tag, now: now), connection, request.tag) != nil else { return }
        replyOK(connection, request.tag)
    }
}
