// A fake client: a uid (some administrators), the lines it sends (well
// formed, hostile, split at any byte) and what it makes of the answers. It
// is the S-33 oracle: every `evaluate` it sent gets PROMPT lines and then
// exactly one final answer (OK or ERR) with its tag, never a second one;
// when the daemon ends the connection cleanly (`* BYE` after `quit`, a
// protocol close, a limit or a clean stop) no evaluation it began is left
// without its final answer. An `evaluate` the daemon never handled (sent
// after the daemon stopped reading) gets no line at all, and is owed none.
// It also judges `watch` (PROTOCOL.md v1.1): STATE lines come only after
// their watch's OK, name the uid watched, stop once a later watch of that
// uid or a cancel-watch is answered, and reach a client that may not
// administer only about its own uid. And S-60: only an `evaluate` that
// asked for `prompt=combined` sees a `biometric-or-passcode` prompt or a
// `retry-after` on a biometric one (a v1 client never does). And session
// agents (S-66, S-67): an app whose evaluation went to an agent hears one
// `PROMPT kind=agent` and then only the final answer; an agent hears its
// requests' PROMPT lines and then exactly one DONE each, nothing after it;
// the app's own `passcode`, `fallback` or `cancel` on a context whose
// evaluation an agent prompts for is never taken (S-68), and only such an
// evaluation can end because its agent went away (`reason=agent-gone`).
import LocalAuthCore
import LocalAuthProtocol

final class SimulatedClient {
    let uid: UserID
    let isAdmin: Bool
    /// Whether the daemon may ever judge it an administrator (root, or an
    /// AdminGroup member at some point): only then may it watch others.
    let mayAdminister: Bool
    /// The connection it has open, or nil.
    var connection: UInt64?
    private var splitter = LineSplitter(maximumLineLength: 1 << 20)
    /// Contexts the daemon gave it (from `new`'s answers), oldest first.
    var contexts: [String] = []
    /// Tags of requests sent and not answered; `new` tags, to learn the ctx.
    private var pending: [String: String] = [:]
    /// The evaluations running on the context an `invalidate` named when it
    /// was sent, until its answer.
    private var pendingContext: [String: Set<String>] = [:]
    /// `evaluate` tags without their final answer, per context.
    var running: [String: String] = [:]
    /// `evaluate` tags whose evaluation waits at a passcode prompt, and
    /// those that got any PROMPT (the daemon handled them).
    var atPasscode: Set<String> = []
    private var prompted: Set<String> = []
    /// S-60: `evaluate` tags that asked for the combined prompt.
    private var combined: Set<String> = []
    /// Whether the evaluation `tag` asked for the combined prompt.
    func isCombined(_ tag: String) -> Bool { combined.contains(tag) }
    /// S-66: `evaluate` tags whose prompts went to a session agent.
    private var routed: Set<String> = []
    /// The contexts whose running evaluation a session agent prompts for.
    var routedContexts: [String] { routed.compactMap { running[$0] }.sorted() }
    /// S-68: `passcode`/`fallback`/`cancel` tags it sent on a context whose
    /// every running evaluation was routed when it sent them.
    private var answersForAgent: Set<String> = []
    /// S-65: the tag of its `register-agent` once answered OK; the
    /// requests it was sent and that have not ended, and those that ended.
    private var agentTag: String?
    var isAgent: Bool { agentTag != nil }
    private(set) var agentRequests: Set<String> = []
    private var endedRequests: Set<String> = []
    /// `* BYE` came, and `* ERR` lines that say replies were lost (the log
    /// failed while they were held, or the client read too slowly).
    private(set) var sawBye = false
    /// Steps left during which it reads nothing (its socket's buffer fills).
    var stalled = 0
    private(set) var lostReplies = false
    private var answered: Set<String> = []
    private var nextTag = 0
    /// Bytes of a line it started sending and has not finished.
    var partial: [UInt8] = []
    /// The tag of the last request made, and of the line cut in two.
    var lastTag: String?
    var partialTag: String?

    /// The uid each `watch` and `cancel-watch` sent names; the watches
    /// answered OK (tag -> uid); tags whose watch was replaced or cancelled.
    private var watchTargets: [String: UserID] = [:]
    private var watching: [String: UserID] = [:]
    private var retiredWatches: Set<String> = []

    /// A desktop's agent process (S-65): it registers for its user's
    /// session as soon as it connects and answers the prompts it is sent.
    let isDesktopAgent: Bool

    init(uid: UserID, isAdmin: Bool, mayAdminister: Bool? = nil, isDesktopAgent: Bool = false) {
        self.uid = uid
        self.isAdmin = isAdmin
        self.mayAdminister = mayAdminister ?? isAdmin
        self.isDesktopAgent = isDesktopAgent
    }

    func tag() -> String {
        nextTag += 1
        return "t\(nextTag)"
    }

    /// A request line, remembered so that its answer can be judged.
    func request(_ verb: String, _ arguments: [(String, String)] = [], tag: String? = nil) -> [UInt8] {
        let tag = tag ?? self.tag()
        lastTag = tag
        pending[tag] = verb
        let ctx = arguments.first(where: { $0.0 == "ctx" })?.1
        if verb == "evaluate", let ctx { running[tag] = ctx }
        if verb == "evaluate", arguments.contains(where: { $0 == ("prompt", "combined") }) { combined.insert(tag) }
        if verb == "invalidate", let ctx { pendingContext[tag] = Set(running.filter { $0.value == ctx }.keys) }
        if ["passcode", "fallback", "cancel"].contains(verb), let ctx {
            let evaluations = running.filter { $0.value == ctx }.keys
            if !evaluations.isEmpty, evaluations.allSatisfy(routed.contains) { answersForAgent.insert(tag) }
        }
        if verb == "watch" || verb == "cancel-watch" {
            watchTargets[tag] = arguments.first(where: { $0.0 == "uid" }).flatMap { UserID($0.1) } ?? uid
        }
        var line = LineWriter()
        line.beginRequest(tag: tag, verb: verb)
        for (key, value) in arguments { line.append(key: key, value: value) }
        line.endLine()
        return line.bytes
    }

    /// Bytes the daemon sent it.
    func receive(_ bytes: [UInt8], oracle: Oracle) {
        splitter.append(contentsOf: bytes)
        while let event = splitter.next() {
            guard case .line(let line) = event else { return oracle.violation("a reply line over 1 MiB") }
            let words = line.split(separator: UInt8(ascii: " "), maxSplits: 2)
            guard words.count >= 2 else { return oracle.violation("a reply line without a status: \(String(decoding: line, as: UTF8.self))") }
            let tag = String(decoding: words[0], as: UTF8.self)
            let status = String(decoding: words[1], as: UTF8.self)
            let rest = words.count > 2 ? String(decoding: words[2], as: UTF8.self) : ""
            if status == "ERR", rest.contains("name=unavailable") {
                if rest.contains("nearly full") { oracle.countReserveRefusal() } else { oracle.refusedWhileFailed() }
            }
            if tag == "*" {
                if status == "BYE" { sawBye = true }
                if status == "ERR", rest.contains("name=unavailable") || rest.contains("unread") { lostReplies = true }
                continue
            }
            if status == "STATE" {
                judgeState(tag: tag, rest: rest, oracle: oracle)
                continue
            }
            if tag == agentTag, status == "PROMPT" || status == "DONE" {
                judgeAgentLine(status: status, rest: rest, oracle: oracle)
                continue
            }
            judge(tag: tag, status: status, rest: rest, oracle: oracle)
        }
    }

    private func judge(tag: String, status: String, rest: String, oracle: Oracle) {
        if answered.contains(tag) {
            return oracle.violation("S-33: \(tag) of uid \(uid) got \(status) after its final answer")
        }
        if let ctx = running[tag] {
            if status == "PROMPT", rest == "kind=agent" {
                // S-66: once, and nothing of the prompts after it.
                if !routed.insert(tag).inserted || prompted.contains(tag) {
                    oracle.violation("S-66: \(tag) of uid \(uid) got kind=agent after another prompt line")
                }
                prompted.insert(tag)
                oracle.countRoutedEvaluation()
                return
            }
            if status == "PROMPT", routed.contains(tag) {
                return oracle.violation("S-66: \(tag) of uid \(uid), prompted by an agent, got \(rest.prefix(80))")
            }
            if status == "PROMPT" {
                prompted.insert(tag)
                let both = rest.hasPrefix("kind=biometric-or-passcode ")
                if both || rest.contains(" retry-after=") {
                    oracle.countCombinedPrompt(halfEnded: !both)
                    if !combined.contains(tag) {
                        oracle.violation("S-60: \(tag) of uid \(uid) did not ask for the combined prompt and got \(rest.prefix(80))")
                    }
                }
                // A combined prompt takes a passcode too.
                if both || rest.hasPrefix("kind=passcode ") { atPasscode.insert(tag) } else { atPasscode.remove(tag) }
                return
            }
            let fields = rest.split(separator: " ")
            if fields.contains("reason=agent-gone") {
                // S-68: only an evaluation its agent prompted for, and systemCancel.
                if !routed.contains(tag) || !fields.contains("name=systemCancel") {
                    oracle.violation("S-68: \(tag) of uid \(uid) ended with \(status) \(rest.prefix(80)), not routed or not systemCancel")
                }
                oracle.countAgentGone()
            }
            running[tag] = nil
            atPasscode.remove(tag)
            prompted.remove(tag)
            combined.remove(tag)
            routed.remove(tag)
            answered.insert(tag)
            pending[tag] = nil
            oracle.answeredEvaluation()
            _ = ctx
            return
        }
        guard let verb = pending.removeValue(forKey: tag) else { return }  // `*` lines, answers to hostile lines
        if answersForAgent.remove(tag) != nil {
            // S-68: the prompts are the agent's; the app's answer is refused, never taken.
            if status == "OK" { oracle.violation("S-68: uid \(uid)'s \(verb) \(tag) on a routed evaluation was taken") }
            if rest.split(separator: " ").contains("name=permission-denied") { oracle.countAppAnswerRefused() }
        }
        if verb == "register-agent", status == "OK" {
            if agentTag != nil { oracle.violation("S-65: uid \(uid)'s connection registered as an agent twice") }
            agentTag = tag
        }
        if verb == "new", status == "OK", let word = rest.split(separator: " ").first(where: { $0.hasPrefix("ctx=") }) {
            contexts.append(String(word.dropFirst(4)))
        }
        // S-33: an invalidated context's evaluation was answered before the OK.
        if verb == "invalidate", status == "OK", let before = pendingContext.removeValue(forKey: tag),
           let open = before.sorted().first(where: { running[$0] != nil }) {
            oracle.violation("S-33: invalidate \(tag) of uid \(uid) was answered OK before evaluation \(open)'s final answer")
        }
        pendingContext[tag] = nil
        if verb == "watch" || verb == "cancel-watch", let target = watchTargets.removeValue(forKey: tag), status == "OK" {
            // A watch answered OK replaces this connection's earlier watch of the uid; a cancel-watch ends it.
            for (earlier, watched) in watching where watched == target {
                watching[earlier] = nil
                retiredWatches.insert(earlier)
            }
            if verb == "watch" {
                if target != uid, !mayAdminister {
                    oracle.violation("watch: uid \(uid), never an administrator, was let watch uid \(target) (\(tag))")
                }
                watching[tag] = target
            }
        }
    }

    /// A line to this agent (S-67): PROMPTs of a request until its one DONE.
    private func judgeAgentLine(status: String, rest: String, oracle: Oracle) {
        guard let number = rest.split(separator: " ").first(where: { $0.hasPrefix("request=") })?.dropFirst(8) else {
            return oracle.violation("S-67: an agent line without its request: \(rest.prefix(80))")
        }
        let request = String(number)
        if endedRequests.contains(request) {
            return oracle.violation("S-67: agent of uid \(uid) got \(status) for request \(request) after its DONE")
        }
        if status == "PROMPT" {
            if !rest.contains(" app-uid=\(uid) ") {
                oracle.violation("S-66: agent of uid \(uid) was sent another user's prompt: \(rest.prefix(120))")
            }
            agentRequests.insert(request)
            oracle.countAgentPrompt()
        } else {
            if agentRequests.remove(request) == nil {
                oracle.violation("S-67: agent of uid \(uid) got DONE for request \(request), which it was never sent")
            }
            endedRequests.insert(request)
        }
    }

    /// A STATE line of a watch.
    private func judgeState(tag: String, rest: String, oracle: Oracle) {
        oracle.countWatchState()
        let named = rest.split(separator: " ").first { $0.hasPrefix("uid=") }.flatMap { UserID($0.dropFirst(4)) }
        if retiredWatches.contains(tag) {
            return oracle.violation("watch: uid \(uid) got STATE for \(tag) after that watch was replaced or cancelled")
        }
        guard let target = watching[tag] else {
            return oracle.violation("watch: uid \(uid) got STATE for \(tag), which is no watch answered OK")
        }
        if named != target {
            oracle.violation("watch: \(tag) of uid \(uid) watches uid \(target) but got STATE for \(String(describing: named))")
        }
    }

    /// The connection ended: by the daemon (`byDaemon`, after its last
    /// byte reached the client) or by the client or a crash. What it waited
    /// for will not come.
    func disconnected(byDaemon: Bool, oracle: Oracle) {
        if byDaemon, sawBye, !lostReplies, let tag = running.keys.sorted().first(where: { prompted.contains($0) }) {
            oracle.violation("S-33: uid \(uid)'s evaluation \(tag) had no final answer when the daemon closed cleanly")
        }
        connection = nil
        splitter = LineSplitter(maximumLineLength: 1 << 20)
        contexts.removeAll()
        pending.removeAll()
        pendingContext.removeAll()
        running.removeAll()
        atPasscode.removeAll()
        prompted.removeAll()
        partial.removeAll()
        watchTargets.removeAll()
        watching.removeAll()
        retiredWatches.removeAll()
        routed.removeAll()
        answersForAgent.removeAll()
        agentTag = nil
        agentRequests.removeAll()
        endedRequests.removeAll()
        sawBye = false
        lostReplies = false
    }
}
