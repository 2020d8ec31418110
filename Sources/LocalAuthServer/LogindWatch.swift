// logind in the loop (S-61..S-63): the shell's side of the LogindPort. Its
// bus socket is one more fd of the EventLoop's epoll set
// (EventLoop.Token.logindBus); every question is an asynchronous call of the
// shared Logind client with a 2 s timeout, answered into the core. logind is
// looked for once, at start: without a system bus, or with nothing owning
// org.freedesktop.login1 (a container), the core hears it is absent and
// nothing waits for it (no client is remote by its session, the lid is open).
//
// Session agents (S-65, S-66) ask it too (`lookUpPinned`): which session a
// connection's process is in, with the process pinned by its pidfd so that
// the answer is about the process that connected. The pidfd is taken from
// the socket (SO_PEERPIDFD); logind is asked by pid (Debian 12's systemd 252
// has no pidfd variant of GetSessionByPID); a process that exited before
// the answer came makes it "unavailable" (its pid may name another process
// by then). A process in no session stands for its user's display session
// (logind's User.Display, as polkit's sd_uid_get_display): what systemd's
// user manager starts (a desktop's apps in their scopes, the agent's own
// user unit) belongs to no session. The pidfd's inode (pidfs) goes with
// the answer: what an agent checks its own pidfd of the pid against (S-67). S-61..S-63's questions
// are asked only when `whereabouts` (biometry configured and one of their
// keys on); agents' whenever a request needs it.
import LocalAuthCore
import LocalAuthSystem

final class LogindWatch: LogindPort {
    /// S-61's bound: a question logind has not answered by then is
    /// answered as unavailable (a remote client, fail safe).
    static let callTimeout: UInt64 = 2_000_000
    unowned let server: ServerCore
    let epoll: Epoll
    private var bus: DBusConnection?
    private var logind: Logind?
    private var registeredFD: Int32 = -1
    private var watchingWritable = false
    /// S-65: pinned lookups asked and not answered, with the pidfd of each process.
    private var pinned: [Connection.ID: PinnedProcess] = [:]

    init(address: String?, server: ServerCore, epoll: Epoll, whereabouts: Bool = true) {
        self.server = server
        self.epoll = epoll
        do {
            let bus = try DBusConnection(address: address)
            try epoll.add(FileDescriptor(rawValue: bus.fd), events: .readable, data: EventLoop.Token.logindBus.rawValue)
            registeredFD = bus.fd
            self.bus = bus
            let logind = Logind(bus: bus)
            self.logind = logind
            guard whereabouts else { return }
            if server.whereabouts.settings.cancelOnSuspend {
                try logind.watchSleep { [unowned self] suspending in self.server.logindSleep(suspending) }
            }
            server.whereabouts.logindPresent = true
            server.logindPort = self
        } catch {
            DaemonLog.info("logind cannot be asked (\(error)): no client is remote by its session, and the lid counts as open.")
            drop()
        }
    }

    func askSession(pid: Int32, connection: Connection.ID) {
        guard let logind else { return server.logindSessionAnswered(connection, .unavailable(LogindError(absent: true, message: "logind is not running."))) }
        logind.session(ofProcess: pid, timeoutMicros: LogindWatch.callTimeout) { [unowned self] lookup in
            if case .unavailable(let error) = lookup, error.absent { self.server.logindAbsent() }
            self.server.logindSessionAnswered(connection, lookup)
        }
    }

    /// S-65: which session connection `id`'s process (on `socket`,
    /// SO_PEERCRED `pid`) belongs to, pinned; the answer goes to
    /// `sessionLookedUp`, at once when logind cannot be asked.
    func lookUpPinned(_ id: Connection.ID, socket: FileDescriptor?, pid: Int32, uid: UInt32) {
        guard let socket, pid > 0 else {
            return server.sessionLookedUp(id, PeerSession(session: .unavailable("The connection has no process to ask about."),
                                                          process: nil))
        }
        let process: PinnedProcess
        do {
            process = try PinnedProcess(peerOf: socket.rawValue, pid: pid)
        } catch {
            return server.sessionLookedUp(id, PeerSession(session: .unavailable("Its process cannot be pinned (\(error))."),
                                                          process: nil))
        }
        lookUp(id, pinned: process, uid: uid)
    }

    /// The same for a process already pinned (a D-Bus API caller's, pinned
    /// when the bus named its pid: S-70).
    func lookUp(_ id: Connection.ID, pinned process: PinnedProcess, uid: UInt32) {
        let pid = process.pid
        guard let logind else {
            return server.sessionLookedUp(id, PeerSession(session: .unavailable("logind is not running."), process: process.inode))
        }
        pinned[id] = process
        logind.session(ofProcess: pid, timeoutMicros: LogindWatch.callTimeout) { [unowned self] lookup in
            guard case .noSession = lookup, pinned[id] != nil else { return self.pinnedAnswered(id, lookup) }
            logind.displaySession(ofUser: uid, timeoutMicros: LogindWatch.callTimeout) { [unowned self] display in
                // Only a session of that very user stands in.
                if case .session(let session) = display, session.uid != uid { return self.pinnedAnswered(id, .noSession) }
                self.pinnedAnswered(id, display)
            }
        }
    }

    private func pinnedAnswered(_ id: Connection.ID, _ lookup: SessionLookup) {
        guard let process = pinned.removeValue(forKey: id) else { return }
        let session: PeerSession.Session
        if process.hasExited {
            session = .unavailable("The process exited before logind answered.")
        } else {
            switch lookup {
            case .session(let found):
                session = AgentRoute.isValidSession(found.id)
                    ? .session(id: found.id, uid: found.uid, remote: found.remote, remoteHost: found.remoteHost)
                    : .unavailable("logind named a session id outside its grammar.")
            case .noSession:
                session = .none
            case .unavailable(let error):
                session = .unavailable(error.message)
            }
        }
        let inode = process.inode
        process.close()
        server.sessionLookedUp(id, PeerSession(session: session, process: inode))
    }

    func askLid() {
        guard let logind else { return server.logindLidAnswered(.failure(LogindError(absent: true, message: "logind is not running."))) }
        logind.lid(timeoutMicros: LogindWatch.callTimeout) { [unowned self] answer in
            self.server.logindLidAnswered(answer)
        }
    }

    /// The loop saw the bus fd ready.
    func busReady() {
        guard let bus else { return }
        do {
            try bus.process()
        } catch {
            DaemonLog.notice("The connection to logind was lost (\(error)).")
            drop()
            return
        }
        endOfTurn()
    }

    /// The loop's timer: a call's timeout may have passed.
    func timerFired() {
        if let bus, let deadline = bus.deadline, deadline <= MonotonicClock.nowNanos() / 1000 { busReady() }
    }

    /// When a call times out (sd-bus says, monotonic ns), or nil.
    var nextDeadline: UInt64? { bus?.deadline.map { $0 * 1000 } }

    /// Watch for writability while sd-bus has output queued.
    func endOfTurn() {
        guard let bus, registeredFD >= 0 else { return }
        let writable = bus.wantsWritable
        guard writable != watchingWritable else { return }
        watchingWritable = writable
        try? epoll.modify(FileDescriptor(rawValue: registeredFD), events: writable ? [.readable, .writable] : .readable,
                          data: EventLoop.Token.logindBus.rawValue)
    }

    /// No logind from now on: everything waiting for it is let go.
    private func drop() {
        if registeredFD >= 0 { try? epoll.remove(FileDescriptor(rawValue: registeredFD)) }
        registeredFD = -1
        bus?.close()
        bus = nil
        logind = nil
        let asked = pinned
        pinned.removeAll()
        for (id, process) in asked.sorted(by: { $0.key < $1.key }) {
            server.sessionLookedUp(id, PeerSession(session: .unavailable("The connection to logind was lost."), process: process.inode))
        }
        if server.logindPort === self { server.logindPort = nil }
        server.logindAbsent()
    }

    func shutdown() { drop() }
}
