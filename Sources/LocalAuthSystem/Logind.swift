// logind (org.freedesktop.login1) as the daemon needs it, over a
// DBusConnection that the caller drives (its fd in the caller's loop, or a
// blocking `process()` loop in a tool): which session a process belongs to
// and whether it is remote (S-61), the lid and the dock (S-62), and the
// PrepareForSleep signal (S-63). Every call is asynchronous with a timeout
// and answers exactly once.
//
// Shared: the daemon (LocalAuthServer's LogindWatch) and the session agents
// of issue 31 ("which session does this pid belong to, and does this uid
// own it") use this one type; keep it free of either's policy.
//
// Every answer from the bus is hostile until parsed (DBusMessage reads only
// exact shapes); the replies come from whoever owns org.freedesktop.login1
// on that bus, which on the system bus only root can.
import Glibc

/// One logind session, as its properties describe it.
public struct LoginSession: Sendable, Equatable {
    /// logind's session id ("2", "c1").
    public var id: String
    /// The session's object path.
    public var path: String
    /// The user the session belongs to (its `User` property).
    public var uid: UInt32
    /// `Remote`: logged in over the network (sshd, a remote display).
    public var remote: Bool
    /// `RemoteHost`, "" when unknown or local.
    public var remoteHost: String
    public var active: Bool
    /// `Seat`'s id, "" for a session without a seat (ssh, cron).
    public var seat: String
    /// `Type` (tty, x11, wayland, mir, unspecified) and `Class` (user, greeter, ...).
    public var type: String
    public var sessionClass: String

    public init(id: String, path: String, uid: UInt32, remote: Bool, remoteHost: String = "", active: Bool = true,
                seat: String = "", type: String = "", sessionClass: String = "") {
        self.id = id
        self.path = path
        self.uid = uid
        self.remote = remote
        self.remoteHost = remoteHost
        self.active = active
        self.seat = seat
        self.type = type
        self.sessionClass = sessionClass
    }

    /// Whether `uid` owns this session (issue 31's agents answer only
    /// for their own user's sessions).
    public func isOwned(by uid: UInt32) -> Bool { self.uid == uid }
}

/// What logind said about a process.
public enum SessionLookup: Sendable, Equatable {
    /// The process belongs to this session.
    case session(LoginSession)
    /// logind knows the process and it belongs to no session (a system
    /// service, a process started by cron without pam_systemd, a container).
    case noSession
    /// logind could not be asked or did not answer: why (not running —
    /// `absent` —, a timeout, a reply of the wrong shape).
    case unavailable(LogindError)
}

/// The lid switch and the dock, as logind's Manager reports them.
public struct LidState: Sendable, Equatable {
    public var closed: Bool
    public var docked: Bool

    public init(closed: Bool, docked: Bool) {
        self.closed = closed
        self.docked = docked
    }
}

public final class Logind {
    public static let service = "org.freedesktop.login1"
    public static let managerPath = "/org/freedesktop/login1"
    public static let managerInterface = "org.freedesktop.login1.Manager"
    public static let sessionInterface = "org.freedesktop.login1.Session"
    public static let userInterface = "org.freedesktop.login1.User"
    static let properties = "org.freedesktop.DBus.Properties"
    /// logind's answer for a process outside every session.
    static let noSessionErrors: Set<String> = [
        "org.freedesktop.login1.NoSessionForPID", "org.freedesktop.login1.NoSuchSession",
    ]
    /// The bus's answers when nothing owns (or can be started as) logind's name.
    static let absentErrors: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
    ]

    public let bus: DBusConnection

    public init(bus: DBusConnection) {
        self.bus = bus
    }

    /// The session of process `pid`: GetSessionByPID, then the session's
    /// properties. `answer` runs once, inside a later `bus.process()`
    /// (or at once if the call cannot be sent).
    public func session(ofProcess pid: Int32, timeoutMicros: UInt64, answer: @escaping (SessionLookup) -> Void) {
        guard pid > 0 else { return answer(.noSession) }
        do {
            try bus.call(destination: Logind.service, path: Logind.managerPath, interface: Logind.managerInterface,
                         member: "GetSessionByPID", arguments: [.uint32(UInt32(pid))], timeoutMicros: timeoutMicros) { [weak self] reply in
                guard let self else { return }
                if let error = reply.error {
                    if Logind.noSessionErrors.contains(error.name) { return answer(.noSession) }
                    return answer(.unavailable(LogindError(reply: error)))
                }
                guard let path = reply.read([.objectPath])?.first?.string else {
                    return answer(.unavailable(LogindError(absent: false,
                        message: "logind answered GetSessionByPID with an unexpected shape.")))
                }
                self.session(atPath: path, timeoutMicros: timeoutMicros, answer: answer)
            }
        } catch {
            answer(.unavailable(LogindError(absent: false, message: "Failed to ask logind: \(error)")))
        }
    }

    /// The display session of user `uid` (its `User` object's `Display`:
    /// the graphical session logind deems the user's primary one), for a
    /// process that belongs to no session of its own (one that systemd's
    /// user manager started: a desktop app's scope, a user unit), as polkit
    /// asks it (sd_uid_get_display). `.noSession` when the user has none.
    public func displaySession(ofUser uid: UInt32, timeoutMicros: UInt64, answer: @escaping (SessionLookup) -> Void) {
        let failed = { (what: String) in
            answer(.unavailable(LogindError(absent: false, message: "logind answered \(what) with an unexpected shape.")))
        }
        do {
            try bus.call(destination: Logind.service, path: Logind.managerPath, interface: Logind.managerInterface,
                         member: "GetUser", arguments: [.uint32(uid)], timeoutMicros: timeoutMicros) { [weak self] reply in
                guard let self else { return }
                if let error = reply.error {
                    if error.name == "org.freedesktop.login1.NoSuchUser" { return answer(.noSession) }
                    return answer(.unavailable(LogindError(reply: error)))
                }
                guard let user = reply.read([.objectPath])?.first?.string else { return failed("GetUser") }
                self.displaySession(userPath: user, timeoutMicros: timeoutMicros, answer: answer, failed: failed)
            }
        } catch {
            answer(.unavailable(LogindError(absent: false, message: "Failed to ask logind: \(error)")))
        }
    }

    private func displaySession(userPath: String, timeoutMicros: UInt64, answer: @escaping (SessionLookup) -> Void,
                                failed: @escaping (String) -> Void) {
        do {
            try bus.call(destination: Logind.service, path: userPath, interface: Logind.properties, member: "GetAll",
                         arguments: [.string(Logind.userInterface)], timeoutMicros: timeoutMicros) { [weak self] reply in
                guard let self else { return }
                if let error = reply.error { return answer(.unavailable(LogindError(reply: error))) }
                // `Display` is "(so)": its session id is what is read of it.
                guard let properties = reply.readProperties(), let id = properties["Display"]?.string else {
                    return failed("the user's properties")
                }
                guard !id.isEmpty else { return answer(.noSession) }
                self.session(named: id, timeoutMicros: timeoutMicros, answer: answer, failed: failed)
            }
        } catch {
            answer(.unavailable(LogindError(absent: false, message: "Failed to ask logind: \(error)")))
        }
    }

    private func session(named id: String, timeoutMicros: UInt64, answer: @escaping (SessionLookup) -> Void,
                         failed: @escaping (String) -> Void) {
        do {
            try bus.call(destination: Logind.service, path: Logind.managerPath, interface: Logind.managerInterface,
                         member: "GetSession", arguments: [.string(id)], timeoutMicros: timeoutMicros) { [weak self] reply in
                guard let self else { return }
                if let error = reply.error {
                    if Logind.noSessionErrors.contains(error.name) { return answer(.noSession) }
                    return answer(.unavailable(LogindError(reply: error)))
                }
                guard let path = reply.read([.objectPath])?.first?.string else { return failed("GetSession") }
                self.session(atPath: path, timeoutMicros: timeoutMicros, answer: answer)
            }
        } catch {
            answer(.unavailable(LogindError(absent: false, message: "Failed to ask logind: \(error)")))
        }
    }

    /// The session at object path `path` (its properties, one GetAll).
    public func session(atPath path: String, timeoutMicros: UInt64, answer: @escaping (SessionLookup) -> Void) {
        do {
            try bus.call(destination: Logind.service, path: path, interface: Logind.properties, member: "GetAll",
                         arguments: [.string(Logind.sessionInterface)], timeoutMicros: timeoutMicros) { reply in
                if let error = reply.error {
                    if Logind.noSessionErrors.contains(error.name) || error.name == "org.freedesktop.DBus.Error.UnknownObject" {
                        return answer(.noSession)
                    }
                    return answer(.unavailable(LogindError(reply: error)))
                }
                guard let properties = reply.readProperties(), let session = Logind.session(path: path, properties) else {
                    return answer(.unavailable(LogindError(absent: false,
                        message: "logind's session properties have an unexpected shape.")))
                }
                answer(.session(session))
            }
        } catch {
            answer(.unavailable(LogindError(absent: false, message: "Failed to ask logind: \(error)")))
        }
    }

    /// The Manager's `LidClosed` and `Docked` (one GetAll: logind announces
    /// no change of either, so the caller reads them when it needs them).
    public func lid(timeoutMicros: UInt64, answer: @escaping (Result<LidState, LogindError>) -> Void) {
        do {
            try bus.call(destination: Logind.service, path: Logind.managerPath, interface: Logind.properties,
                         member: "GetAll", arguments: [.string(Logind.managerInterface)], timeoutMicros: timeoutMicros) { reply in
                if let error = reply.error { return answer(.failure(LogindError(reply: error))) }
                guard let properties = reply.readProperties(limit: 256) else {
                    return answer(.failure(LogindError(absent: false, message: "logind's properties have an unexpected shape.")))
                }
                // A logind without a lid switch (a desktop) reports false;
                // one that lacks the properties (an old one, a mock) too.
                answer(.success(LidState(closed: properties["LidClosed"]?.boolean ?? false,
                                         docked: properties["Docked"]?.boolean ?? false)))
            }
        } catch {
            answer(.failure(LogindError(absent: false, message: "Failed to ask logind: \(error)")))
        }
    }

    /// Calls `handler(true)` when logind announces that the system is about
    /// to sleep, `handler(false)` when it woke up (PrepareForSleep). Only
    /// logind's own name may send it (the bus daemon matches the sender).
    @discardableResult
    public func watchSleep(_ handler: @escaping (Bool) -> Void) throws(SystemError) -> UInt64 {
        try bus.matchSignal(sender: Logind.service, path: Logind.managerPath, interface: Logind.managerInterface,
                            member: "PrepareForSleep") { message in
            guard let sleeping = message.read([.boolean])?.first?.boolean else { return }
            handler(sleeping)
        }
    }

    /// A session from its GetAll properties; nil when `Id` or `User` is missing.
    static func session(path: String, _ properties: [String: DBusValue]) -> LoginSession? {
        guard let id = properties["Id"]?.string, let uid = properties["User"]?.uint32 else { return nil }
        return LoginSession(id: id, path: path, uid: uid, remote: properties["Remote"]?.boolean ?? false,
                            remoteHost: properties["RemoteHost"]?.string ?? "", active: properties["Active"]?.boolean ?? false,
                            seat: properties["Seat"]?.string ?? "", type: properties["Type"]?.string ?? "",
                            sessionClass: properties["Class"]?.string ?? "")
    }

    static func describe(_ error: (name: String, message: String)) -> String {
        if absentErrors.contains(error.name) { return "logind is not running." }
        return "logind refused: \(error.name)\(error.message.isEmpty ? "" : " (\(error.message))")."
    }
}

/// Why logind did not answer a question.
public struct LogindError: Error, Sendable, Equatable {
    /// Nothing owns logind's name on the bus (no logind: a container, a
    /// system without systemd): a fact, not a fault.
    public var absent: Bool
    public var message: String

    public init(absent: Bool, message: String) {
        self.absent = absent
        self.message = message
    }

    init(reply error: (name: String, message: String)) {
        absent = Logind.absentErrors.contains(error.name)
        message = Logind.describe(error)
    }
}
