// The D-Bus API's front (S-70, docs/decisions/0011): the daemon's second
// transport over the same core. Shell-side, like FprintdSensor: it owns a
// bus connection in the event loop's epoll set, owns the well-known name,
// and turns each unique bus name that calls into a connection of the core
// (credentials from the bus, admission by `connectionOpened`, the end by
// `peerClosed` when the name leaves). Method calls become the request lines
// a socket client would send (BusMethods.swift), fed to the core as that
// connection's input; what the core writes for the connection comes back
// here instead of to a socket (`send`) and becomes method returns and
// signals (BusOutput.swift). Nothing here waits: every bus call is
// asynchronous, and a Flatpak app id is read on a thread of its own.
import Glibc
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

final class BusFront {
    /// How often a missing bus, or a name the bus refused, is tried again.
    static let retryEvery: UInt64 = 10_000_000_000
    /// The bus's answers (credentials, the name) within this, or given up.
    static let callTimeout: UInt64 = 5_000_000
    /// S-72: calls of one name waiting for their answers.
    static let maximumUnanswered = 32
    /// A Flatpak app id read that takes longer is given up (S-73).
    static let appLookupLimit: UInt64 = 1_000_000_000

    let address: String?
    unowned let core: ServerCore
    /// Whose limits a caller counts against (S-53), shared with the socket.
    let principals: CallerPrincipals
    let epoll: Epoll
    let token: UInt64
    var bus: DBusConnection?
    var registeredFD: Int32 = -1
    var watchingWritable = false
    var lastAttempt: UInt64 = 0
    /// Whether the name is ours, and the last problem journaled (once each).
    var serving = false
    var reported: String?
    /// Callers by unique name (identifying or admitted), and the admitted
    /// ones (gone ones too, until the core forgets their connection) by id.
    var callers: [String: BusCaller] = [:]
    var byConnection: [Connection.ID: BusCaller] = [:]
    var nextRequest: UInt64 = 1
    /// Callers whose connection's output was taken and not yet delivered.
    var delivering: [BusCaller] = []
    /// Set when lines were fed to the core (the loop's turn end asks).
    var fed = false
    /// `.flatpak-info` reads, off the loop, and when each must answer by.
    let apps: LookupThread<AppQuery, String?>
    var appDeadlines: [String: UInt64] = [:]
    /// A read passed its limit and has not answered: the thread is stuck
    /// (a hostile mount), so callers are admitted without reading until it answers.
    var appReadsStuck = false
    var writer = LineWriter(capacity: 512)

    init(address: String?, core: ServerCore, principals: CallerPrincipals, epoll: Epoll, token: UInt64) throws {
        self.address = address
        self.core = core
        self.principals = principals
        self.epoll = epoll
        self.token = token
        apps = try LookupThread { query in
            FlatpakInfo.applicationID(pid: query.process.pid, stillThere: { !query.process.hasExited })
        }
    }

    // MARK: - The bus in the loop

    /// Connects and asks for the name when there is no bus, at most every 10 s.
    func connectIfNeeded() {
        guard bus == nil else { return }
        let monotonic = MonotonicClock.nowNanos()
        guard lastAttempt == 0 || monotonic - lastAttempt >= BusFront.retryEvery else { return }
        lastAttempt = monotonic
        do {
            let bus = try DBusConnection(address: address)
            self.bus = bus
            try epoll.add(FileDescriptor(rawValue: bus.fd), events: .readable, data: token)
            registeredFD = bus.fd
            watchingWritable = false
            try bus.exportSubtree(BusNames.root) { [unowned self] message in received(message) }
            try bus.matchSignal(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                member: "NameOwnerChanged") { [unowned self] message in nameOwnerChanged(message) }
            // DO_NOT_QUEUE (4): another owner means we are not the service.
            try bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                         member: "RequestName", arguments: [.string(BusNames.service), .uint32(4)],
                         timeoutMicros: BusFront.callTimeout) { [unowned self] reply in nameRequested(reply) }
        } catch {
            drop(problem: "the bus is not reachable (\(error))")
        }
    }

    private func nameRequested(_ reply: DBusMessage) {
        if let error = reply.error {
            return drop(problem: "the bus refused the name to uid \(getuid()) (\(error.name): \(error.message)); "
                        + "its policy is /usr/share/dbus-1/system.d/\(BusNames.service).conf")
        }
        // 1: now the owner, 4: already was; 3: another process owns it.
        guard let result = reply.read([.uint32])?.first?.uint32, result == 1 || result == 4 else {
            return drop(problem: "another process owns \(BusNames.service)")
        }
        serving = true
        reported = nil
        core.journal(.notice, "Serving the D-Bus API as \(BusNames.service) on \(address ?? "the system bus").")
    }

    /// The loop saw the bus fd ready (or a deadline passed).
    func busReady() {
        guard let bus else { return }
        do {
            try bus.process()
        } catch {
            drop(problem: "the connection to the bus was lost (\(error))")
        }
    }

    /// After the loop's turn: watch for writability while sd-bus has output queued.
    func endOfTurn() {
        guard let bus, registeredFD >= 0 else { return }
        let writable = bus.wantsWritable
        guard writable != watchingWritable else { return }
        watchingWritable = writable
        try? epoll.modify(FileDescriptor(rawValue: registeredFD), events: writable ? [.readable, .writable] : .readable, data: token)
    }

    /// The loop's timer: retries, the bus's call timeouts, app id reads that take too long.
    func timerFired() {
        connectIfNeeded()
        if let bus, let deadline = bus.deadline, deadline <= MonotonicClock.nowNanos() / 1000 { busReady() }
        let now = MonotonicClock.nowNanos()
        for (name, deadline) in appDeadlines where deadline <= now {
            appDeadlines[name] = nil
            appReadsStuck = true
            if let caller = callers[name], caller.phase == .identifying { admit(caller) }
        }
    }

    /// No call of ours and no app id read waits (S-83). A caller's own
    /// call counts as a connection of the core's (busPeers).
    var isIdle: Bool { appDeadlines.isEmpty && bus?.deadline == nil }

    /// When the timer is next needed (monotonic ns): the retry while there
    /// is no bus, a call's timeout, the oldest app id read's limit.
    var nextDeadline: UInt64? {
        guard let bus else { return lastAttempt + BusFront.retryEvery }
        return ([bus.deadline.map { $0 * 1000 }] + appDeadlines.values.map { Optional($0) }).compactMap { $0 }.min()
    }

    /// The bus is gone, or would not give us the name: every caller's
    /// connection ends (S-14), and the bus is tried again later.
    func drop(problem: String) {
        if registeredFD >= 0 { try? epoll.remove(FileDescriptor(rawValue: registeredFD)) }
        registeredFD = -1
        bus?.close()
        bus = nil
        serving = false
        for caller in callers.values { leave(caller) }
        callers.removeAll()
        appDeadlines.removeAll()
        if reported != problem {
            reported = problem
            core.journal(.error, "Not serving the D-Bus API: \(problem); the socket is served as before, "
                         + "the bus is tried again every 10 s ([DBus] Serve=no turns this off).")
        }
    }

    /// Shutdown: the last signals and returns (S-32's final answers) go
    /// out, within a bound, before the connection closes.
    func shutdown() {
        guard let bus else { return }
        bus.drain(timeoutMicros: 1_000_000) { !bus.wantsWritable }
        bus.close()
        self.bus = nil
    }

    // MARK: - Callers

    /// A method call to one of our objects (the subtree's handler).
    func received(_ message: DBusMessage) {
        guard let sender = message.sender, let member = message.member else { return }
        if message.interface == BusNames.introspectable || (message.interface == nil && member == "Introspect") {
            return introspect(message, sender: sender)
        }
        let caller = callers[sender] ?? BusCaller(name: sender)
        guard caller.unanswered < BusFront.maximumUnanswered else {
            bus?.replyError(to: message, name: "org.freedesktop.DBus.Error.LimitsExceeded",
                            message: "At most \(BusFront.maximumUnanswered) calls of one bus name may wait for their answers.")
            return
        }
        caller.unanswered += 1
        switch caller.phase {
        case .admitted:
            dispatch(message.retained(), caller)
        case .identifying, .gone:
            caller.early.append(message.retained())
            if callers[sender] == nil {
                callers[sender] = caller
                askCredentials(caller)
            }
        }
    }

    /// Who the name is, as the bus daemon says (never as the caller does).
    private func askCredentials(_ caller: BusCaller) {
        let name = caller.name
        do {
            try bus?.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                          member: "GetConnectionCredentials", arguments: [.string(name)],
                          timeoutMicros: BusFront.callTimeout) { [unowned self] reply in credentials(reply, of: name) }
        } catch {
            refuse(caller, "org.freedesktop.DBus.Error.AccessDenied", "The bus did not say who is calling.")
        }
    }

    private func credentials(_ reply: DBusMessage, of name: String) {
        guard let caller = callers[name], caller.phase == .identifying else { return }
        guard reply.error == nil, let properties = reply.readProperties(), let uid = properties["UnixUserID"]?.uint32 else {
            return refuse(caller, "org.freedesktop.DBus.Error.AccessDenied", "The bus gave no uid for this caller.")
        }
        caller.uid = uid
        caller.pid = Int32(bitPattern: properties["ProcessID"]?.uint32 ?? 0)
        // S-73: pinned now, read off the loop; while a read is stuck past its
        // limit, admitted without one.
        // Two pidfds of the same moment: the app read's own (its thread's to
        // use and drop), and one that the logind lookup takes (and closes).
        guard caller.pid > 0, let process = try? PinnedProcess(pid: caller.pid) else { return admit(caller) }
        caller.process = process
        guard !appReadsStuck, let forRead = try? PinnedProcess(pid: caller.pid) else { return admit(caller) }
        caller.appRead = forRead
        appDeadlines[name] = MonotonicClock.nowNanos() + BusFront.appLookupLimit
        apps.ask(AppQuery(name: name, process: forRead))
    }

    /// The app id reads answered (the loop saw `apps.wake`).
    func appsAnswered() {
        for (query, app) in apps.collect() {
            appReadsStuck = false
            guard appDeadlines.removeValue(forKey: query.name) != nil, let caller = callers[query.name],
                  caller.phase == .identifying, caller.appRead === query.process else { continue }
            caller.app = app
            admit(caller)
        }
    }

    /// The caller's process, pinned when the bus named it, handed to the
    /// one logind lookup of S-65 (which closes it).
    func process(of id: Connection.ID) -> PinnedProcess? {
        defer { byConnection[id]?.process = nil }
        return byConnection[id]?.process
    }

    /// The caller becomes a connection of the core, and its calls so far run.
    private func admit(_ caller: BusCaller) {
        caller.appRead = nil
        let peer = PeerCredentials(pid: caller.pid, uid: caller.uid, gid: UInt32.max)
        // S-53: a subordinate uid or a setuid program on the bus counts as on the socket.
        let principal = principals.principal(ofBusCaller: caller.uid, process: caller.process)
        if let changed = principals.takeChangedRanges() { core.subordinateRanges = changed }
        switch core.connectionOpened(peer: peer, principal: principal, bus: BusPeer(name: caller.name, app: caller.app)) {
        case .refused:
            refuse(caller, BusNames.errorPrefix + "LimitExceeded",
                   "Too many connections (MaxConnections, MaxConnectionsPerUser); try again later.")
        case .accepted(let id):
            caller.phase = .admitted(id)
            byConnection[id] = caller
            let early = caller.early
            caller.early = []
            for call in early { dispatch(call, caller) }
        }
    }

    /// Answers everything the caller asked with `error`, and forgets it
    /// (its next call starts afresh).
    private func refuse(_ caller: BusCaller, _ error: String, _ text: String) {
        for call in caller.early { bus?.replyError(to: call.message, name: error, message: text) }
        caller.early = []
        caller.unanswered = 0
        caller.phase = .gone
        if callers[caller.name] === caller { callers[caller.name] = nil }
        appDeadlines[caller.name] = nil
    }

    /// NameOwnerChanged: a unique name that left is its connection's end (S-14).
    private func nameOwnerChanged(_ message: DBusMessage) {
        guard let values = message.read([.string, .string, .string]), let name = values[0].string,
              values[2].string == "", name.hasPrefix(":"), let caller = callers.removeValue(forKey: name) else { return }
        appDeadlines[name] = nil
        leave(caller)
    }

    /// The caller is gone: its connection closes as a socket's at EOF
    /// (its evaluations end, their answers go nowhere), and is forgotten
    /// when the core says so (`closed`).
    private func leave(_ caller: BusCaller) {
        let connection = caller.connection
        caller.phase = .gone
        caller.early = []
        if let connection { core.peerClosed(connection) }
    }

    /// `.close` of a bus connection: the core forgot it (the name left, or
    /// the core closed it: MaxPendingBytes). What still waits is answered.
    func closed(_ id: Connection.ID) {
        guard let caller = byConnection.removeValue(forKey: id) else { return }
        if caller.phase != .gone {
            let (name, text) = caller.refusal ?? (BusNames.errorPrefix + "Unavailable", "localauthd closed this caller's connection.")
            for call in caller.waitingCalls { bus?.replyError(to: call.message, name: name, message: text) }
        }
        caller.phase = .gone
        caller.pending.removeAll()
        caller.requests.removeAll()
        SecretMemory.wipe(&caller.inbox)
        if callers[caller.name] === caller { callers[caller.name] = nil }
    }
}

/// A `.flatpak-info` read for a caller whose process is pinned (S-73).
/// Unchecked: the thread only asks the pinned process whether it exited,
/// and its pidfd closes only when the last reference (the loop's or the
/// thread's) goes.
struct AppQuery: @unchecked Sendable {
    let name: String
    let process: PinnedProcess
}

/// What the core records of a bus connection (S-73).
package struct BusPeer: Equatable {
    let name: String
    let app: String?
}
