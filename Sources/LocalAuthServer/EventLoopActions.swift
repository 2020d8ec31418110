// The epoll shell as the core's ServerShell: what each action means for the
// daemon's real sockets, workers, lookup thread, journal and sd_notify. The
// order in which actions are performed, and how their answers go back to
// the core, is the shared ActionPerformer's.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem

extension EventLoop: ServerShell {
    /// Performs the core's actions, after every input call. What a bus
    /// connection's `.send` gave the bus front becomes its messages then
    /// (`deliverToBus`). A stored flag, so the socket's path pays one load.
    @inline(__always)
    func perform() {
        performer.perform(core, through: self)
        if busOutputTaken { deliverToBus() }
    }

    /// The bus front's messages (which may feed the core again: the actions
    /// are performed again, until no more output is taken).
    @inline(never)
    func deliverToBus() {
        while busOutputTaken, let busFront {
            busOutputTaken = false
            busFront.deliver()
            performer.perform(core, through: self)
        }
    }

    /// A socket, or a caller of the D-Bus API (S-70), whose output goes to the bus.
    func socketIsOpen(_ id: Connection.ID) -> Bool { sockets.contains(id) || busFront?.holds(id) == true }

    /// Writes what the socket takes without blocking; a write error is the
    /// peer gone. A bus connection's output is taken whole by the bus front.
    func write(_ output: UnsafeRawBufferPointer, to id: Connection.ID) -> Int? {
        guard let fd = sockets[id] else {
            guard let taken = busFront?.take(output, for: id) else { return nil }
            busOutputTaken = true
            return taken
        }
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
        // No socket: a bus connection's end (S-70), or nothing.
        guard let fd = sockets.remove(id) else { return busFront?.closed(id) ?? () }
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

    func lookUpAccount(_ query: AccountQuery) -> AccountAnswer? {
        accountLookups.ask(query)
        return nil
    }

    /// On the writer thread, never the loop: its answer wakes the loop.
    func writeRights(_ write: RightsWrite) -> SystemError?? {
        rightsWriter.ask(write)
        return nil
    }

    /// On the keyring thread, never the loop: its answer wakes the loop.
    func runKeyringJob(_ job: KeyringJob) -> KeyringAnswer? {
        keyringThread.ask(job)
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
        // A D-Bus API caller has no socket: its process was pinned when the bus named it.
        if sockets[id] == nil, let process = busFront?.process(of: id) { return logind.lookUp(id, pinned: process, uid: uid) }
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
