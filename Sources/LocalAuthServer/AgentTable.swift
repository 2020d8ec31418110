// The session agents the daemon knows (S-65..S-68): at most one per logind
// session, each a connection, and the requests each has open, one per
// routed evaluation it prompts for. Request numbers are the agent's own
// (from 1, never reused on its connection) and are all it ever learns of an
// evaluation: never the app's context id. A value of the core's: it decides
// nothing about who may register (the verb judges logind's answer) and does
// no I/O; ServerCore asks it where an evaluation's lines go.

import LocalAuthCore

struct AgentTable {
    struct Agent: Equatable {
        let connection: Connection.ID
        /// The tag of its `register-agent`: every line it is sent carries it.
        let tag: String
        let uid: UserID
        let pid: ProcessID
        let session: String
        fileprivate(set) var nextRequest: UInt64 = 1
        /// Open requests: number -> the routed evaluation's context.
        fileprivate(set) var requests: [UInt64: ContextID] = [:]
    }

    /// Where a routed evaluation's lines go.
    struct Destination: Equatable {
        let connection: Connection.ID
        let tag: String
        let request: UInt64
    }

    private var bySession: [String: Agent] = [:]
    private var sessionOf: [Connection.ID: String] = [:]
    /// Routed evaluations still open, by context.
    private var routes: [ContextID: (session: String, request: UInt64)] = [:]

    var isEmpty: Bool { bySession.isEmpty }
    var count: Int { bySession.count }

    func agent(ofSession session: String) -> Agent? { bySession[session] }

    /// The agent this connection is, if it is one.
    func agent(on connection: Connection.ID) -> Agent? { sessionOf[connection].flatMap { bySession[$0] } }

    /// Makes `connection` the agent of `session`; false when the session has
    /// one already (S-65: one per session) or the connection is one.
    mutating func register(connection: Connection.ID, tag: String, uid: UserID, pid: ProcessID, session: String) -> Bool {
        guard bySession[session] == nil, sessionOf[connection] == nil else { return false }
        bySession[session] = Agent(connection: connection, tag: tag, uid: uid, pid: pid, session: session)
        sessionOf[connection] = session
        return true
    }

    /// An evaluation of `ctx` was routed to `session`'s agent
    /// (`prompts-routed`): a new request; nil when the agent is gone.
    mutating func open(_ ctx: ContextID, session: String) -> Destination? {
        guard var agent = bySession[session] else { return nil }
        let request = agent.nextRequest
        agent.nextRequest += 1
        agent.requests[request] = ctx
        bySession[session] = agent
        routes[ctx] = (session, request)
        return Destination(connection: agent.connection, tag: agent.tag, request: request)
    }

    /// Where the open routed evaluation of `ctx` sends its lines.
    func destination(of ctx: ContextID) -> Destination? {
        guard let route = routes[ctx], let agent = bySession[route.session] else { return nil }
        return Destination(connection: agent.connection, tag: agent.tag, request: route.request)
    }

    /// The context of request `number` of the agent on `connection`, while open.
    func context(ofRequest number: UInt64, on connection: Connection.ID) -> ContextID? {
        agent(on: connection)?.requests[number]
    }

    /// The routed evaluation of `ctx` ended: its request closes; where to
    /// say so (nil: it was not routed, or its agent is gone).
    mutating func close(_ ctx: ContextID) -> Destination? {
        guard let route = routes.removeValue(forKey: ctx) else { return nil }
        guard var agent = bySession[route.session] else { return nil }
        agent.requests[route.request] = nil
        bySession[route.session] = agent
        return Destination(connection: agent.connection, tag: agent.tag, request: route.request)
    }

    /// The connection closed: the agent it was, and the contexts whose
    /// evaluations it still prompted for (their requests are gone with it).
    mutating func remove(_ connection: Connection.ID) -> (agent: Agent, routed: [ContextID])? {
        guard let session = sessionOf.removeValue(forKey: connection),
              let agent = bySession.removeValue(forKey: session) else { return nil }
        let routed = agent.requests.values.sorted()
        for ctx in routed { routes[ctx] = nil }
        return (agent, routed)
    }

    /// Every agent, by session (a clean stop ends each registration).
    var all: [Agent] { bySession.keys.sorted().compactMap { bySession[$0] } }

    /// Every open request, closed (the log failed: no evaluation goes on).
    mutating func closeAll() -> [Destination] {
        var closed: [Destination] = []
        for ctx in routes.keys.sorted() {
            if let destination = close(ctx) { closed.append(destination) }
        }
        return closed
    }
}
