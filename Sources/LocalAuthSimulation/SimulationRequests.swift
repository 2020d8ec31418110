// What the fake clients send: mostly the protocol's verbs (right or wrong
// passcodes, contexts that are theirs or not, admin verbs from users who
// are not administrators), sometimes several lines in one write
// (pipelined), sometimes hostile bytes. Only the lines are the simulator's;
// every answer is the daemon's own.
import LocalAuthCore

extension Simulation {
    /// One write's worth: one request line, or a few pipelined.
    func line(for client: SimulatedClient) -> [UInt8] {
        // A session agent answers a prompt it was sent (S-68), by request
        // number, mostly; now and then it goes away instead (its session
        // ends, it crashes): the app's evaluation ends with agent-gone.
        if let number = client.agentRequests.sorted().first, random.chance(client.isDesktopAgent ? 80 : 50) {
            switch random.below(20) {
            case 0..<10:
                let secret = random.chance(40) ? (passcodes.passcode(of: client.uid) ?? "") : "wrong-\(random.below(3))"
                return client.request("passcode", [("request", number), ("secret", secret)])
            case 10..<13: return client.request("cancel", [("request", number)])
            case 13..<15: return client.request("fallback", [("request", number)])
            case 15: return client.request("cancel", [("request", String(random.below(50)))])
            default: return client.request("quit")
            }
        }
        // S-65, S-66: a client becomes its session's agent now and then, and
        // asks for its session's agent on one of its contexts.
        if !client.isAgent, random.chance(client.isDesktopAgent ? 60 : client.contexts.isEmpty ? 25 : 8) {
            return client.request("register-agent")
        }
        if let ctx = client.contexts.last, random.chance(8) { return client.request("set", [("ctx", ctx), ("prompt", "agent")]) }
        // S-68: the app answers a prompt that its session's agent shows
        // (refused; a passcode recorded and never checked).
        if let ctx = client.routedContexts.first, random.chance(25) {
            switch random.below(4) {
            case 0, 1: return client.request("passcode", [("ctx", ctx), ("secret", passcodes.passcode(of: client.uid) ?? "x")])
            case 2: return client.request("fallback", [("ctx", ctx)])
            default: return client.request("cancel", [("ctx", ctx)])
            }
        }
        // Several evaluations at their passcode prompt, answered at once
        // (mostly wrong): a delay that the first verdict starts must refuse
        // the checks queued behind it (S-46).
        let prompts = client.running.keys.sorted().filter { client.atPasscode.contains($0) }
        if prompts.count >= 2, random.chance(40) {
            return prompts.flatMap { tag in
                let secret = random.chance(20) ? (passcodes.passcode(of: client.uid) ?? "") : "wrong-\(random.below(3))"
                return client.request("passcode", [("ctx", client.running[tag]!), ("secret", secret)])
            }
        }
        if random.chance(1) {
            // A flood: hundreds of pipelined requests in one write (the
            // core's early write past 16 KiB, MaxPendingBytes against a
            // client that does not read).
            let ctx = client.contexts.isEmpty ? "00112233445566778899aabbccddeeff" : random.pick(client.contexts)
            let verb = random.pick(["can-evaluate", "ping", "status"])
            return (0..<(200 + random.below(600))).flatMap { _ in
                verb == "can-evaluate" ? client.request(verb, [("ctx", ctx), ("policy", "owner")]) : client.request(verb)
            }
        }
        guard random.chance(8) else { return request(for: client) }
        var bytes: [UInt8] = []
        for _ in 0..<(2 + random.below(4)) { bytes += request(for: client) }
        return bytes
    }

    private func request(for client: SimulatedClient) -> [UInt8] {
        let ctx = client.contexts.isEmpty ? "00112233445566778899aabbccddeeff" : random.pick(client.contexts)
        let policy = random.pick(["biometrics", "owner", "owner", "companion", "nonsense"])
        let others: [UserID] = [1000, 1001, 1002, 1003, 4242]
        let passcode = passcodes.passcode(of: client.uid) ?? "none-set"
        // Without a context most requests are refused: a client makes one first, mostly.
        if client.contexts.isEmpty, random.chance(50) { return client.request("new") }
        // A few contexts, each evaluating: more prompts at once.
        if client.contexts.count < 3, random.chance(10) { return client.request("new") }
        // At a combined prompt the user types while the sensor waits, mostly
        // wrong: a delay ends the passcode half and the scan goes on (S-60).
        if let waiting = client.running.first(where: { client.atPasscode.contains($0.key) && client.isCombined($0.key) }),
           random.chance(25) {
            return client.request("passcode", [("ctx", waiting.value), ("secret", random.chance(20) ? passcode : "wrong-0")])
        }
        switch random.below(100) {
        case 0..<12: return client.request("new")
        case 12..<29: return client.request("can-evaluate", [("ctx", ctx), ("policy", policy)])
        case 29..<45:
            // S-60: touch or type, mostly for policy 2 (the others ignore it).
            var arguments = [("ctx", ctx), ("policy", policy), ("reason", "sim")]
            if random.chance(policy == "owner" ? 60 : 15) { arguments.append(("prompt", "combined")) }
            // S-66: as LAContext does, often asks for the session's agent
            // first, in the same write.
            let asks = random.chance(40) ? client.request("set", [("ctx", ctx), ("prompt", "agent")]) : []
            return asks + client.request("evaluate", arguments)
        case 45..<57:
            let secret = random.chance(40) ? passcode : "wrong-\(random.below(3))"
            let target = client.running.first { client.atPasscode.contains($0.key) }?.value ?? ctx
            return client.request("passcode", [("ctx", target), ("secret", secret)])
        case 57..<61: return client.request("fallback", [("ctx", ctx)])
        case 61..<65: return client.request("cancel", [("ctx", ctx)])
        case 65..<70: return client.request("invalidate", [("ctx", ctx)])
        case 70..<74: return client.request("status")
        case 74..<76: return client.request("ping")
        case 76..<77:
            // S-65: mostly for its own session; now and then one it names (its own or not).
            if random.chance(70) { return client.request("register-agent") }
            return client.request("register-agent", [("session", random.pick(["s1000", "t1001", "s\(client.uid)"]))])
        case 77..<78: return client.request("quit")
        case 78..<82: return client.request("enroll", [("uid", String(random.pick(others)))])
        case 82..<85: return client.request("reset", [("uid", String(random.pick(others)))])
        case 85..<86: return client.request("unlocked", [("uid", String(random.pick(others)))])
        case 86..<89:
            // S-36: the old passcode (right or wrong) proves the change; a slow check on a worker.
            let old = random.chance(60) ? passcode : "wrong-\(random.below(3))"
            return client.request("set-passcode", [("secret", "pass-\(client.uid)-\(random.below(4))"), ("old-secret", old)])
        case 89..<92:
            let property = random.pick([("reuse-duration", String(random.pick([0, 5, 60, 400]))),
                                        ("interaction-not-allowed", random.chance(50) ? "true" : "false"),
                                        ("fallback-title", random.pick(["", "Use Passcode", "x y"])),
                                        ("reuse-duration", "-1"), ("prompt", "agent"), ("prompt", "agent")])
            return client.request("set", [("ctx", ctx), property])
        case 92..<94:
            // LAEnvironment's observers: its own uid mostly, another's (admin only) now and then.
            return random.chance(70) ? client.request("watch") : client.request("watch", [("uid", String(random.pick(others)))])
        case 94..<95:
            return random.chance(70) ? client.request("cancel-watch") : client.request("cancel-watch", [("uid", String(random.pick(others)))])
        default: return hostileLine(client)
        }
    }

    private func hostileLine(_ client: SimulatedClient) -> [UInt8] {
        oracle.countHostileLine()
        switch random.below(11) {
        case 0, 1: return (0..<(1 + random.below(40))).map { _ in UInt8(truncatingIfNeeded: random.next()) } + [10]
        case 2, 3: return Array("\(client.tag()) new bogus=1\n".utf8)
        case 4, 5: return Array("\(client.tag()) fly-away ctx=1\n".utf8)
        case 6, 7: return Array("\(client.tag()) evaluate ctx=\(String(repeating: "z", count: 40)) policy=owner reason=x\n".utf8)
        // Too long: the daemon answers `* ERR line-too-long` and closes.
        case 8: return Array(repeating: UInt8(ascii: "a"), count: 8200) + [10]
        default: return Array("\n  \r\n=\0\n".utf8)
        }
    }
}
