// S-61..S-63: where the clients and the reader are, as the daemon learns it
// from PAM (an on-behalf context's rhost) and logind (a connection's
// session, the lid and the dock, sleep). A value: the server asks it
// whether a check must wait for logind, which question to ask, and what
// blocks biometry; the answers come back as inputs. It never talks to the
// bus (LogindWatch does) and reads no clock (times are the turn's).
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem

struct Whereabouts {
    struct Settings: Equatable {
        var skipRemote = true
        var lidClosedInaccessible = true
        /// Reader names (or `*`) inaccessible with the lid closed, docked or not.
        var builtInReaders: [String] = []
        var cancelOnSuspend = true

        init() {}

        init(_ biometry: DaemonConfiguration.Biometry) {
            skipRemote = biometry.skipRemote
            lidClosedInaccessible = biometry.lidClosedInaccessible
            builtInReaders = biometry.builtInReaders
            cancelOnSuspend = biometry.cancelOnSuspend
        }
    }

    /// What the daemon knows of a connection's logind session.
    enum Session: Equatable {
        case unknown
        case asking
        case local
        case remote(host: String?)
        /// logind did not answer (a timeout, an error): answered as remote
        /// (fail safe) until `since` + a second, then asked again.
        case uncertain(since: UInt64)
    }

    /// How long a lid reading, or an uncertain session, stands (ns).
    static let freshness: UInt64 = 1_000_000_000

    var settings = Settings()
    /// Whether a logind can be asked: false without one (no bus, nothing
    /// owns its name), and in the simulator and the core's tests.
    var logindPresent = false
    var sessions: [Connection.ID: Session] = [:]
    var lid: LidState?
    var lidReadAt: UInt64?
    var askingLid = false
    /// Between PrepareForSleep(true) and (false) (CancelOnSuspend=yes).
    var sleeping = false

    /// Whether anything here can block biometry now (else the usual
    /// can-evaluate is answered in place, without asking).
    var mayBlock: Bool {
        sleeping || !remoteContexts.isEmpty || (logindPresent && (settings.skipRemote || settings.lidClosedInaccessible))
    }
    /// On-behalf contexts whose rhost is another machine (S-61).
    var remoteContexts: Set<ContextID> = []

    /// What a check must wait for before it is answered: the connection's
    /// session, or a fresh reading of the lid.
    enum Question: Equatable { case session, lid }
    struct Wait: Equatable {
        var question: Question
        /// Whether to ask logind now (false: the question is already out).
        var ask: Bool
    }

    /// What a check of `connection`'s context (on behalf of a PAM client
    /// from `rhost`, if any) waits for, or nil when it can be answered now.
    mutating func wait(for connection: Connection.ID, rhost: String?, now monotonic: UInt64) -> Wait? {
        guard logindPresent else { return nil }
        if settings.skipRemote, remoteHost(rhost) == nil {
            switch sessions[connection] ?? .unknown {
            case .unknown:
                sessions[connection] = .asking
                return Wait(question: .session, ask: true)
            case .asking:
                return Wait(question: .session, ask: false)
            case .uncertain(let since) where monotonic &- since >= Whereabouts.freshness:
                sessions[connection] = .asking
                return Wait(question: .session, ask: true)
            case .local, .remote, .uncertain:
                break
            }
        }
        if settings.lidClosedInaccessible, lidReadAt.map({ monotonic &- $0 >= Whereabouts.freshness }) ?? true {
            defer { askingLid = true }
            return Wait(question: .lid, ask: !askingLid)
        }
        return nil
    }

    /// Why biometry is unavailable to this client now, or nil (S-61..S-63).
    func block(for connection: Connection.ID, rhost: String?, reader: String?) -> BiometryBlock? {
        if sleeping { return BiometryBlock(.suspend) }
        if settings.skipRemote {
            if let host = remoteHost(rhost) { return BiometryBlock(.remote, detail: host) }
            switch sessions[connection] {
            case .remote(let host)?: return BiometryBlock(.remote, detail: host)
            case .uncertain?: return BiometryBlock(.remote, detail: "an unknown host: logind did not answer")
            default: break
            }
        }
        return inaccessible(reader: reader) ? BiometryBlock(.lidClosed) : nil
    }

    /// S-62: the reader cannot be reached (status, STATE, LAEnvironment).
    func inaccessible(reader: String?) -> Bool {
        guard settings.lidClosedInaccessible, logindPresent, let lid, lid.closed else { return false }
        return lid.docked || builtIn(reader)
    }

    func builtIn(_ reader: String?) -> Bool {
        settings.builtInReaders.contains { $0 == "*" || $0 == reader }
    }

    /// An on-behalf context's remote host, or nil when it is this machine
    /// (S-61: empty, localhost, loopback, or this machine's own name).
    var hostName = ""
    func remoteHost(_ rhost: String?) -> String? {
        guard let rhost, !rhost.isEmpty else { return nil }
        if ["localhost", "127.0.0.1", "::1", "localhost.localdomain"].contains(rhost) || rhost == hostName { return nil }
        return rhost
    }

    // MARK: - logind's answers

    mutating func sessionAnswered(_ connection: Connection.ID, _ lookup: SessionLookup, now monotonic: UInt64) {
        guard sessions[connection] != nil else { return }  // the connection closed meanwhile
        switch lookup {
        case .session(let session):
            sessions[connection] = session.remote ? .remote(host: session.remoteHost.isEmpty ? nil : session.remoteHost) : .local
        case .noSession:
            sessions[connection] = .local
        case .unavailable(let error):
            if error.absent {
                logindPresent = false
                sessions[connection] = .local
            } else {
                sessions[connection] = .uncertain(since: monotonic)
            }
        }
    }

    /// A lid reading; true when whether the reader is inaccessible changed.
    mutating func lidAnswered(_ answer: Result<LidState, LogindError>, reader: String?, now monotonic: UInt64) -> Bool {
        let before = inaccessible(reader: reader)
        askingLid = false
        lidReadAt = monotonic
        switch answer {
        case .success(let state): lid = state
        case .failure(let error) where error.absent: logindPresent = false
        case .failure: break  // the last reading stands; asked again in a second
        }
        return inaccessible(reader: reader) != before
    }

    mutating func forget(_ connection: Connection.ID) {
        sessions[connection] = nil
    }
}
