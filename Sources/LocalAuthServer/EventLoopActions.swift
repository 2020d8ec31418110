// The epoll shell as the core's ServerShell: what each action means for the
// daemon's real sockets, workers, lookup thread, journal and sd_notify. The
// order in which actions are performed, and how their answers go back to
// the core, is the shared ActionPerformer's.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem

extension EventLoop: ServerShell {
    /// Performs the core's actions, after every input call.
    @inline(__always)
    func perform() { performer.perform(core, through: self) }

    func socketIsOpen(_ id: Connection.ID) -> Bool { sockets.contains(id) }

    /// Writes what the socket takes without blocking; a write error is the peer gone.
    func write(_ output: UnsafeRawBufferPointer, to id: Connection.ID) -> Int? {
        guard let fd = sockets[id] else { return nil }
        var sent = 0
        while sent < output.count {
            let result: Int?
            do {
                result = try fd.send(UnsafeRawBufferPointer(rebasing: output[sent...]))
            } catch {
                return nil
            }
            guard let count = result else { break }  // would block
            sent += count
        }
        return sent
    }

    func watch(_ id: Connection.ID, reading: Bool, writing: Bool) {
        guard let fd = sockets[id] else { return }
        var events: Epoll.Events = reading ? [.readable, .readHangUp] : []
        if writing { events.insert(.writable) }
        try? epoll.modify(fd, events: events, data: id)
    }

    func close(_ id: Connection.ID) {
        guard let fd = sockets.remove(id) else { return }
        closes &+= 1
        try? epoll.remove(fd)
        try? fd.close()
    }

    func notify(_ state: String) { _ = try? Systemd.notify(state) }

    func journal(_ entry: JournalEntry) {
        DaemonLog.write(entry.priority, entry.message, id: entry.id, fields: entry.fields)
    }

    func runPasscodeJob(token: UInt64, _ job: PasscodeWorkers.Job) { workers.submit(token: token, job) }

    func runKeyJob(token: UInt64, _ job: KeyJob) -> KeyCompletion? {
        keyWorkers.submit(token: token, job)
        return nil
    }

    /// The store's write (a small file replaced atomically, a few times in
    /// a device's life) on the loop.
    func commitPasscode(_ record: String?, for uid: UserID) throws { try passcodeStore.commit(record, for: uid) }

    func lookUpGroup(_ query: GroupQuery) { adminLookups.ask(query) }

    /// On the writer thread, never the loop: its answer wakes the loop.
    func writeRights(_ write: RightsWrite) -> SystemError?? {
        rightsWriter.ask(write)
        return nil
    }

    /// The core's `.sensor`: the backend does it, and what it reports goes back at once.
    func sensor(_ command: SensorCommand) {
        fprintd?.perform(command)
        deliverSensorReports()
    }

    func reopenLog() throws -> Authenticator {
        guard let reopen else { throw CannotReopen() }
        return try reopen()
    }

    /// The answer comes back through `sessionLookedUp`, in this turn when it
    /// cannot be asked (its requests then run at the turn's end).
    func lookUpSession(_ id: Connection.ID, pid: ProcessID, uid: UserID) {
        guard let logind else {
            return core.sessionLookedUp(id, PeerSession(session: .unavailable("logind is not running."), process: nil))
        }
        logind.lookUpPinned(id, socket: sockets[id], pid: pid, uid: uid)
    }

    /// SIGHUP: the configuration files, read again; a valid one that is
    /// probably not what was meant is warned about (its group lookups are
    /// NSS), ahead of the core's "Reloaded" entry.
    func readConfiguration() -> Result<DaemonConfiguration, any Error>? {
        guard let reload else { return .failure(StoreError("nothing to reload")) }
        do {
            let fresh = try reload()
            DaemonLog.warnAboutConfiguration(fresh)
            return .success(fresh)
        } catch {
            return .failure(error)
        }
    }

    func releaseFreePages() { Memory.releaseFreePages() }

    func hang(seconds: UInt32) { DaemonLog.hangForTest(seconds) }
}
