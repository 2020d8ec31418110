// hello, ping, quit, stats: the connection itself.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    func hello(_ request: Request, _ connection: Connection.ID) {
        if let wanted = request.arguments.value(for: "protocol"), wanted != "1" {
            return reply(connection, request.tag, ProtocolError(.badArgument, "Only protocol 1 is spoken here."))
        }
        replyOK(connection, request.tag, [
            ("protocol", "1"), ("server", "localauthd/\(version)"), ("uid", String(peer(of: connection).uid)),
            ("biometry", authenticator.state.rules.biometryType.wireName),
            // Extension (docs/decisions/0002-apple-api-ios18.md): LAContext.maxBiometryFailures.
            ("lockout-threshold", String(authenticator.state.rules.lockoutThreshold)),
            // S-52, S-57: pam_localauth refuses a daemon whose backends administrators control.
            ("sensor-backend", sensorBackendName), ("passcode-backend", passcodeBackendName),
        ])
    }

    func ping(_ request: Request, _ connection: Connection.ID) {
        replyOK(connection, request.tag)
    }

    func quit(_ request: Request, _ connection: Connection.ID) {
        replyOK(connection, request.tag)
        beginClose(connection)
    }

    func stats(_ request: Request, _ connection: Connection.ID) {
        lookAtSpaceIfStale()  // space-low as it is now
        replyOK(connection, request.tag, [
            ("connections", String(connections.count)), ("contexts", String(authenticator.state.contexts.count)),
            ("accepted", String(counters.accepted)), ("refused-connections", String(counters.refusedConnections)),
            ("requests", String(counters.requests)), ("bad-lines", String(counters.badLines)),
            ("lines-too-long", String(counters.linesTooLong)), ("idle-line-timeouts", String(counters.idleLineTimeouts)),
            ("pending-overflows", String(counters.pendingOverflows)), ("permission-denied", String(counters.permissionDenied)),
            ("log-seq", String(authenticator.recorder.lastSeq)), ("durable-seq", String(authenticator.recorder.durableSeq)),
            ("passcode-checks", String(counters.passcodeChecks)), ("passcode-refused", String(counters.passcodeRefused)),
            ("passcode-busy", String(counters.passcodeBusy)), ("passcode-queued", String(passcodeJobs.waitingCount)),
            ("passcode-running", String(passcodeJobs.runningCount)),
            ("rate-refusals", String(limits.refusedForRate)), ("space-refusals", String(limits.refusedForSpace)),
            ("size-refusals", String(limits.refusedForSize)), ("space-low", limits.spaceLow ? "true" : "false"),
            ("memory-releases", String(limits.memoryReleases)),
        ])
    }
}
