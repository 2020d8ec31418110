// `[Biometry] Backend=fprintd` (S-43): the sensor is a fingerprint reader
// driven by fprintd over D-Bus. This file owns the bus connection inside
// the event loop and what the daemon knows about fprintd: whether it runs,
// which device is the reader, and each user's enrolled fingers. The prompt
// flow (Claim, VerifyStart, VerifyStop, Release and the reader's queue) is
// in FprintdVerify.swift.
//
// This is shell-side I/O that holds no core: the EventLoop makes it, hands it
// its epoll, performs the core's `SensorCommand`s on it, calls its loop hooks
// (the bus fd ready, its timer, the end of a turn, the clean stop), and
// hands what it reports (`reports`: readings, finger lists, the reader's
// state, in order) to the core as inputs. Nothing here blocks: the bus
// socket is one more fd of the loop's epoll set (EventLoop.Token.sensorBus),
// every call is asynchronous with a timeout, a timeout counts as "reader
// not available", and passwd lookups run on a thread of their own
// (UserNames).
import LocalAuthCore
import LocalAuthSystem

final class FprintdSensor {
    let name = "fprintd"
    /// Every call's timeout: a hung fprintd makes the reader unavailable
    /// after this long, never the daemon slow for others.
    static let callTimeout: UInt64 = 5_000_000
    /// How often a missing bus, fprintd or reader is looked for again.
    static let rediscoverEvery: UInt64 = 2_000_000_000

    let address: String?
    /// The EventLoop's epoll set (the bus socket is one of its fds).
    let epoll: Epoll
    /// What happened, for the core, in order (the EventLoop takes them).
    var reports: [SensorReport] = []
    var bus: DBusConnection? {
        didSet { if (bus == nil) != (oldValue == nil) { reports.append(.canListFingers(bus != nil)) } }
    }
    /// The fd registered in epoll (the bus's changes on reconnect).
    var registeredFD: Int32 = -1
    var watchingWritable = false
    var lastAttempt: UInt64 = 0
    /// The reader's object path, once GetDefaultDevice answered.
    var device: String?
    var readerName: String? {
        didSet { if readerName != oldValue { reports.append(.readerName(readerName)) } }
    }
    var discovering = false
    /// Why there is no reading now (nil: the reader is there).
    var problem: String? = "fprintd has not been contacted yet." {
        didSet { if problem != oldValue { reports.append(.problem(problem)) } }
    }
    let names: UserNames
    /// The biometric prompts' side (FprintdVerify.swift).
    var queue: [UserID] = []
    /// The scan that has the reader. Once its PROMPT went out (`shown`), its
    /// end is reported, so that the core holds the next PROMPT line again.
    var active: ActiveScan? {
        didSet {
            guard let before = oldValue, before.shown else { return }
            if active?.uid != before.uid || active?.shown != true { reports.append(.scanEnded(before.uid)) }
        }
    }
    /// Whether the bus starts fprintd on demand (D-Bus activation).
    var activatable = false
    /// Fingers to list once GetDefaultDevice answers (user -> query).
    var waitingForDevice: [UserID: UInt64] = [:]
    /// A Release is in flight, or refused and to be asked again (no Claim
    /// before fprintd took it).
    var releasing = false
    /// S-63: between PrepareForSleep(true) and (false); a claim to give
    /// back at the resume.
    var suspended = false
    var releaseOnResume = false
    /// F-50: when a refused Release is asked again, and how often it was.
    var releaseRetryAt: UInt64?
    var releaseRetries = 0
    static let releaseRetryAfter: UInt64 = 500_000_000
    /// Five minutes of refusals (a resume takes seconds); then the claim
    /// is left to end with the bus connection.
    static let releaseRetries = 600
    /// A refused Claim (AlreadyInUse) is tried again from then (monotonic ns).
    var claimRetryAt: UInt64 = 0
    /// A verify-unknown-error waiting to see whether the reader vanished.
    var pendingError: (uid: UserID, reading: SensorReading, deadline: UInt64)?
    /// How long that wait lasts (nanoseconds).
    static let errorGrace: UInt64 = 1_000_000_000

    init(address: String?, epoll: Epoll) throws {
        self.address = address
        self.epoll = epoll
        names = try UserNames()
    }

    // MARK: - The bus in the loop

    /// Connects (or reconnects) when there is no bus, at most every 2 s.
    func connectIfNeeded() {
        guard bus == nil else { return }
        let monotonic = MonotonicClock.nowNanos()
        guard lastAttempt == 0 || monotonic - lastAttempt >= FprintdSensor.rediscoverEvery else { return }
        lastAttempt = monotonic
        do {
            let bus = try DBusConnection(address: address)
            self.bus = bus
            try epoll.add(FileDescriptor(rawValue: bus.fd), events: .readable, data: EventLoop.Token.sensorBus.rawValue)
            registeredFD = bus.fd
            watchingWritable = false
            try bus.matchSignal(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                interface: "org.freedesktop.DBus", member: "NameOwnerChanged") { [unowned self] message in
                guard let present = FprintdReplies.fprintdOwnerChanged(message) else { return }
                present ? fprintdAppeared() : fprintdVanished()
            }
            try bus.matchSignal(sender: FprintdReplies.service, path: nil, interface: FprintdReplies.deviceInterface,
                                member: "VerifyStatus") { [unowned self] message in
                verifyStatus(message)
            }
            try bus.matchSignal(sender: FprintdReplies.service, path: "/net/reactivated/Fprint",
                                interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved") { [unowned self] message in
                if let path = FprintdReplies.removedObject(message) { deviceRemoved(path) }
            }
            // A reader plugged in while none was known (no polling for it, S-82).
            try bus.matchSignal(sender: FprintdReplies.service, path: "/net/reactivated/Fprint",
                                interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded") { [unowned self] _ in
                if device == nil { discover() }
            }
            askActivatable()
            discover()
        } catch {
            drop(problem: "The D-Bus system bus is not reachable (\(error)).")
        }
    }

    /// The loop saw the bus fd ready.
    func busReady() {
        guard let bus else { return }
        do {
            try bus.process()
        } catch {
            return drop(problem: "The D-Bus connection was lost (\(error)).")
        }
        endOfTurn()
    }

    /// The loop's timer (`nextDeadline`): a call's timeout may have
    /// passed, a reconnect, a refused Release or Claim, an error's grace.
    func timerFired() {
        connectIfNeeded()
        retryRelease()
        expirePendingError()
        if active == nil, !queue.isEmpty, claimRetryAt != 0, MonotonicClock.nowNanos() >= claimRetryAt {
            startNextScan()
            // Not started (a Release or a resume comes first, and starts it): asked once.
            if active == nil { claimRetryAt = 0 }
        }
        if let bus, let deadline = bus.deadline, deadline <= MonotonicClock.nowNanos() / 1000 { busReady() }
    }

    /// No scan, queued user, call or Release waits (S-83).
    var isIdle: Bool { active == nil && queue.isEmpty && !releasing && releaseRetryAt == nil && bus?.deadline == nil }

    /// When the timer is next needed (monotonic ns), or nil. A missing
    /// reader is not looked for on a clock (S-82): the next check that needs
    /// it asks (`listFingers`), and fprintd's appearance (NameOwnerChanged)
    /// or a new device (InterfacesAdded) is seen on the bus.
    var nextDeadline: UInt64? {
        guard let bus else { return lastAttempt + FprintdSensor.rediscoverEvery }
        var deadlines = [bus.deadline.map { $0 * 1000 }, releaseRetryAt, pendingError?.deadline]
        if active == nil, !queue.isEmpty, claimRetryAt != 0 { deadlines.append(claimRetryAt) }
        return deadlines.compactMap { $0 }.min()
    }

    /// After the loop's turn: watch for writability while sd-bus has output queued.
    func endOfTurn() {
        guard let bus, registeredFD >= 0 else { return }
        let writable = bus.wantsWritable
        guard writable != watchingWritable else { return }
        watchingWritable = writable
        try? epoll.modify(FileDescriptor(rawValue: registeredFD), events: writable ? [.readable, .writable] : .readable,
                                 data: EventLoop.Token.sensorBus.rawValue)
    }

    /// The bus is gone: every prompt loses its sensor, reconnect later.
    func drop(problem why: String) {
        if registeredFD >= 0 { try? epoll.remove(FileDescriptor(rawValue: registeredFD)) }
        registeredFD = -1
        bus?.close()
        bus = nil
        discovering = false
        releasing = false
        releaseRetryAt = nil
        releaseRetries = 0
        waitingForDevice.removeAll()
        readerGone(problem: why)
        // Closing the bus dropped the calls in flight with their replies:
        // their queries end now, answering with the problem just set.
        reports.append(.fingersQueriesLost)
    }

    func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusArgument] = [],
              reply: @escaping (DBusMessage) -> Void) -> Bool {
        guard let bus else { return false }
        do {
            try bus.call(destination: FprintdReplies.service, path: path, interface: interface, member: member,
                         arguments: arguments, timeoutMicros: FprintdSensor.callTimeout, reply: reply)
            return true
        } catch {
            DaemonLog.error("fprintd: \(member) could not be sent: \(error)")
            return false
        }
    }

    // MARK: - fprintd and its reader

    /// GetDefaultDevice, then the reader's name. On a real system the call
    /// also starts fprintd (D-Bus activation).
    func discover() {
        guard !discovering else { return }
        discovering = call(FprintdReplies.managerPath, FprintdReplies.managerInterface, "GetDefaultDevice") { [unowned self] reply in
            discovering = false
            guard let path = FprintdReplies.devicePath(reply) else {
                readerGone(problem: reply.error.map(FprintdReplies.problem) ?? "fprintd gave no reader.")
                return endWaitingForDevice()
            }
            device = path
            problem = nil
            _ = call(path, "org.freedesktop.DBus.Properties", "Get",
                     [.string(FprintdReplies.deviceInterface), .string("name")]) { [unowned self] reply in
                if device == path { readerName = FprintdReplies.readerName(reply) }
            }
            startNextScan()
            let waiting = waitingForDevice.sorted { $0.key < $1.key }
            waitingForDevice.removeAll()
            for (uid, query) in waiting { listFingers(uid, query: query) }
        }
        if !discovering { endWaitingForDevice() }
    }

    /// No reader to ask: the queries that waited for one end (their checks
    /// answer with the problem now set).
    private func endWaitingForDevice() {
        let waiting = waitingForDevice.sorted { $0.key < $1.key }
        waitingForDevice.removeAll()
        for (uid, query) in waiting { reports.append(.fingersQueryEnded(uid, query: query)) }
    }

    func fprintdAppeared() {
        if device == nil { discover() }
    }

    /// fprintd exits after some idle time when D-Bus can start it again
    /// (the system bus's activation): then it is not gone, only asleep, and
    /// the next check or prompt wakes it (GetDefaultDevice). Where nothing
    /// can start it (a private bus), it is gone. A prompt it was verifying
    /// loses its sensor either way (fprintd never idles while claimed).
    func fprintdVanished() {
        guard activatable else { return readerGone(problem: "fprintd is not running.") }
        lostSensor()
        device = nil
    }

    /// Whether the bus can start fprintd (ListActivatableNames), asked once per connection.
    func askActivatable() {
        guard let bus else { return }
        _ = try? bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                          member: "ListActivatableNames", timeoutMicros: FprintdSensor.callTimeout) { [unowned self] reply in
            activatable = reply.readStringArray(limit: 4096)?.contains(FprintdReplies.service) ?? false
        }
    }

    /// The reader cannot read: the active prompt's sensor disappeared
    /// (S-27), waiting prompts too; the daemon keeps serving.
    func readerGone(problem why: String) {
        device = nil
        readerName = nil
        // The prompts get their reading first: with the problem already
        // set, the core would answer biometryNotAvailable instead of S-27's
        // disconnect.
        lostSensor()
        problem = why
    }

    // MARK: - Enrolled fingers

    /// S-43: asked for when a check of `uid` needs a fresh answer (or a
    /// check that does not wait wants one; EnrollmentParking.swift). The
    /// answer is recorded when it differs, then the query ends, which lets
    /// the checks waiting for it answer. Any failure ends it too, after
    /// the problem it shows (a timeout: "fprintd did not answer.") is set.
    /// The core asks only while the bus is up (`.canListFingers`).
    func listFingers(_ uid: UserID, query: UInt64) {
        guard bus != nil else { return reports.append(.fingersQueryEnded(uid, query: query)) }
        // No reader known: the check is also when it is looked for again
        // (or fprintd woken), and the fingers are listed once it answers.
        if device == nil {
            waitingForDevice[uid] = query
            return discover()
        }
        names.resolve(uid) { [unowned self] name in
            guard let name, let device else { return reports.append(.fingersQueryEnded(uid, query: query)) }
            let sent = call(device, FprintdReplies.deviceInterface, "ListEnrolledFingers", [.string(name)]) { [unowned self] reply in
                if let fingers = FprintdReplies.enrolledFingers(reply) {
                    DaemonLog.info("fprintd: \(name) (uid \(uid)) has \(fingers.isEmpty ? "no fingers" : fingers.joined(separator: ", ")) enrolled"
                                   + (reply.error.map { " (\($0.name): \($0.message))" } ?? ""))
                    reports.append(.fingersListed(uid, fingers))
                } else if let error = reply.error, error.name.hasPrefix("org.freedesktop.DBus.Error.")
                            || error.name == "net.reactivated.Fprint.Error.NoSuchDevice" {
                    // fprintd went away or hangs: what is there now is
                    // GetDefaultDevice's to say (it also restarts an
                    // activatable fprintd).
                    readerGone(problem: FprintdReplies.problem(error))
                    discover()
                } else if let error = reply.error {
                    DaemonLog.error("fprintd: ListEnrolledFingers for uid \(uid) failed: \(error.name) \(error.message)")
                }
                reports.append(.fingersQueryEnded(uid, query: query))
            }
            if !sent { reports.append(.fingersQueryEnded(uid, query: query)) }
        }
    }

    /// The core's `.sensor` action.
    func perform(_ command: SensorCommand) {
        switch command {
        case .scan(let uid): scanRequested(uid: uid)
        case .stopScan(let uid): scanCancelled(uid: uid)
        case .listFingers(let uid, let query): listFingers(uid, query: query)
        case .systemSleeping(let suspending): systemSleeping(suspending)
        }
    }

    /// The reports since the last call, in order, for the core.
    func takeReports() -> [SensorReport] {
        defer { reports.removeAll() }
        return reports
    }

    /// Clean stop (S-32): the claim is released, and its answer waited for
    /// (at most 1 s): closing the bus with VerifyStop and Release still
    /// unsent left fprintd's device claimed now and then (CI, 1 December).
    func shutdown() {
        if let active { finish(active, release: true) }
        self.active = nil
        queue.removeAll()  // Release's answer must not start another user's scan
        bus?.drain(timeoutMicros: 1_000_000) { !releasing }
        bus?.close()
    }
}
