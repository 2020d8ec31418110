// One unique bus name that called the D-Bus API (S-70): the connection of
// the core it became, the calls waiting for their answers (by the tag of
// the request line each became), and the objects it owns (S-71). A value
// of BusFront's, which alone changes it.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

final class BusCaller {
    let name: String
    var phase: Phase = .identifying
    /// The bus's answers about the name (GetConnectionCredentials).
    var uid: UInt32 = .max
    var pid: Int32 = 0
    /// The caller's process, pinned by a pidfd when the bus named its pid:
    /// for its app id (S-73) and its logind session (S-65, S-66). Linux
    /// has no SO_PEERPIDFD through a bus, so a caller that handed its bus
    /// connection on and exited before this can defeat it (F-57).
    var process: PinnedProcess?
    /// The pinned process the app id read uses (its own pidfd).
    var appRead: PinnedProcess?
    var app: String?
    /// Calls that came before the connection was admitted, in order.
    var early: [DBusOwnedMessage] = []
    /// What each tag's reply lines answer.
    var pending: [String: Pending] = [:]
    /// Calls received and not answered yet (S-72's bound).
    var unanswered = 0
    /// Context ids (hex) of the contexts it created.
    var contexts: Set<String> = []
    /// Its requests, and the open request of each context (S-71).
    var requests: [UInt64: BusRequest] = [:]
    var requestOfContext: [String: UInt64] = [:]
    /// The environment (`user/self`): the watch's tag once started, the
    /// properties last sent, and the Get/GetAll calls waiting for them.
    var watchTag: String?
    var environment: [DBusEntry]?
    var environmentWaiters: [(call: DBusOwnedMessage, property: String?)] = []
    /// The core's output not yet cut into lines.
    var inbox: [UInt8] = []
    /// The `* ERR` the core sent before closing the connection, as a D-Bus error.
    var refusal: (name: String, message: String)?
    private var nextTag: UInt64 = 1

    enum Phase: Equatable {
        /// Waiting for the bus's credentials (and the app id).
        case identifying
        /// A connection of the core.
        case admitted(Connection.ID)
        /// The name left the bus, or the core closed its connection.
        case gone
    }

    init(name: String) { self.name = name }

    var connection: Connection.ID? {
        if case .admitted(let id) = phase { return id }
        return nil
    }

    /// The calls still owed an answer (for a close that answers them).
    var waitingCalls: [DBusOwnedMessage] {
        early + requests.values.compactMap(\.call) + pending.values.compactMap(\.call) + environmentWaiters.map(\.call)
    }

    /// A fresh tag for a request line (the protocol's tag grammar).
    func tag() -> String {
        defer { nextTag &+= 1 }
        return "b\(nextTag)"
    }
}

/// What the reply line of a tag answers.
enum Pending {
    /// `OK`: an empty return; `ERR`: its error.
    case plain(DBusOwnedMessage)
    /// `new`: the context's path.
    case created(DBusOwnedMessage)
    /// `can-evaluate`: the check's five values.
    case check(DBusOwnedMessage)
    /// The root's one-call check: its `new`, then its `can-evaluate`
    /// (the `invalidate` after it answers nobody).
    case oneShotNew(DBusOwnedMessage, policy: UInt32)
    case oneShotCheck(DBusOwnedMessage)
    case ignored
    /// `right-state`, `right-secret`.
    case rightState(DBusOwnedMessage)
    case secret(DBusOwnedMessage)
    /// `get` for a property's `Get` (nil: `GetAll`).
    case properties(DBusOwnedMessage, property: BusPropertySpec?)
    /// The lines of request N's `evaluate` or `right-authorize`, and the
    /// `ping` sent behind it (its `OK`: the request was taken).
    case evaluation(UInt64)
    case taken(UInt64)
    /// The environment's `watch`: `OK`, then STATE lines.
    case watch
}

/// An evaluation reported through a request object.
struct BusRequest {
    let context: String
    let tag: String
    let pingTag: String
    /// The EvaluatePolicy or Authorize call, until the request is taken.
    var call: DBusOwnedMessage?
    /// Lines of the evaluation that came before it was taken.
    var early: [Response] = []
}
