// Secret hygiene and permissions (issue 8 items 6 and 7, S-39). Every test's
// tearDown already scans its daemons' state directories, stdout and stderr
// for every registered secret; this test adds a workload made to tempt a
// leak: secrets in every verb that takes one, in malformed lines, in refused
// requests, non-ASCII secrets (UTF-16 forms differ from UTF-8), a SIGKILL
// (torn tails are copied to .broken files) and snapshots.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class SecretHygieneTests: ReliabilityTestCase {
    func testNoSecretReachesTheDiskOrTheOutput() throws {
        let daemon = try startDaemon(configuration: configuration(passcode: ["DelayAfterFailures=50"], log: ["SnapshotEvery=7", "SegmentSize=8K"]))
        uncleanStopAllowed.insert(ObjectIdentifier(daemon))
        let admin = try daemon.connect()
        let first = Secrets.make("H7giene-First")
        let unicode = Secrets.make("pässwörd✓Ωmega")
        let spaced = Secrets.make("with space and \"quote\"")
        try prepareUser(admin, uid: 0, passcode: first)
        let user = try daemon.connect(asUID: 1000)
        XCTAssertOK(try user.request("u1 set-passcode secret=\"\(unicode)\""))
        // Changing it with a wrong old secret (counted), then the right one.
        let wrongOld = Secrets.make("Wr0ngOldSecret")
        XCTAssertEqual(try user.request("u2 set-passcode secret=\(Secrets.make("NeverSet1x")) old-secret=\(wrongOld)").status, .err)
        let quoted = spaced.replacingOccurrences(of: "\"", with: "\\\"")
        XCTAssertOK(try user.request("u3 set-passcode secret=\"\(quoted)\" old-secret=\"\(unicode)\""))
        // Refused and malformed requests that carry secrets.
        let tooShort = Secrets.make("Sh7")
        XCTAssertEqual(try user.request("u4 set-passcode secret=\(tooShort)").status, .err)
        for (index, line) in ["m\(index(0)) passcode secret=\(Secrets.make("NoCtxSecret1"))",
                              "m\(index(1)) frobnicate secret=\(Secrets.make("UnknownVerbSecret"))",
                              "m\(index(2)) passcode ctx=zz secret=\"\(Secrets.make("Unterminated0"))",
                              "m\(index(3)) passcode ctx=00 secret=\(Secrets.make("BadCtxSecret")) extra=1",
                              "m\(index(4)) ping secret=\(Secrets.make("PingSecret77"))"].enumerated() {
            _ = index
            try user.send(line)
            _ = try user.next()
        }
        // Wrong and right passcodes in evaluations, for both users.
        try admin.request("e0 enroll uid=1000").status == .ok ? () : XCTFail("enroll")
        for round in 0..<6 {
            let client = round % 2 == 0 ? admin : user
            let right = round % 2 == 0 ? first : spaced
            let ctx = try newContext(client)
            let evalTag = tag("ev")
            try client.send("\(evalTag) evaluate ctx=\(ctx) policy=owner reason=hygiene")
            var prompt = try client.next(tag: evalTag)
            if prompt["kind"] == "biometric" {
                XCTAssertOK(try admin.request("\(tag("s")) sensor uid=\(round % 2 == 0 ? 0 : 1000) result=nomatch"))
                prompt = try client.next(tag: evalTag)
                XCTAssertOK(try client.request("\(tag("f")) fallback ctx=\(ctx)"))
                prompt = try client.next(tag: evalTag)
            }
            XCTAssertEqual(prompt["kind"], "passcode", "\(prompt)")
            let wrong = Secrets.make("Wr0ng-\(round)-Ünï")
            XCTAssertOK(try client.request("\(tag("p")) passcode ctx=\(ctx) secret=\"\(wrong)\""))
            _ = try client.next(tag: evalTag)
            let escaped = right.replacingOccurrences(of: "\"", with: "\\\"")
            XCTAssertOK(try client.request("\(tag("p")) passcode ctx=\(ctx) secret=\"\(escaped)\""))
            XCTAssertEqual(try client.next(tag: evalTag)["method"], "passcode")
        }
        // A passcode submitted right before a SIGKILL (its check may be in flight).
        let last = try newContext(admin)
        try admin.send("last evaluate ctx=\(last) policy=owner reason=kill")
        _ = try admin.next(tag: "last")
        XCTAssertOK(try admin.request("lf sensor uid=0 result=nomatch"))
        _ = try admin.next(tag: "last")
        XCTAssertOK(try admin.request("lf2 fallback ctx=\(last)"))
        _ = try admin.next(tag: "last")
        try admin.send("lp passcode ctx=\(last) secret=\(Secrets.make("K1lledWhileChecking"))")
        daemon.kill()
        user.shutDown()
        try daemon.start()
        XCTAssertOK(try daemon.connect().request("after ping"))
        // The passcode file holds yescrypt hashes only, mode 0600.
        let passcodes = readText(daemon.stateDirectory + "/passcodes")
        for line in passcodes.split(separator: "\n") {
            let hash = line.split(separator: ":", maxSplits: 1).last ?? ""
            XCTAssertTrue(hash.hasPrefix("$y$"), "not a yescrypt hash: \(line.prefix(12))...")
        }
        // (tearDown scans the state directory, stdout and stderr, and checks the modes.)
    }

    private func index(_ value: Int) -> Int { value }

    /// The socket is usable by every uid, and identity comes from SO_PEERCRED only.
    func testTheSocketServesEveryUIDAndIdentityComesFromTheKernel() throws {
        let daemon = try startDaemon()
        var info = stat()
        XCTAssertEqual(stat(daemon.socketPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o666, "socket mode \(String(info.st_mode & 0o777, radix: 8))")
        for uid: UInt32 in [1, 1000, 4242, 65534] {
            let client = try daemon.connect(asUID: uid)
            let hello = try client.request("h hello protocol=1 client=uid0")
            XCTAssertOK(hello)
            XCTAssertEqual(hello["uid"], String(uid), "identity is not the kernel's")
            XCTAssertEqual(try client.request("s status")["uid"], String(uid))
            XCTAssertProtocolError(try client.request("s0 status uid=0"), "permission-denied")
            let ctx = try newContext(client)
            XCTAssertOK(try client.request("g get ctx=\(ctx)"))
            client.shutDown()
        }
        // The contexts were recorded with the kernel's uids.
        let log = try LogContents(stateDirectory: daemon.stateDirectory)
        let owners = Set(log.events.compactMap { event -> UInt32? in
            if case .contextCreated(let uid, _, _, _) = event.body { return uid }
            return nil
        })
        XCTAssertEqual(owners, [1, 1000, 4242, 65534])
    }
}
