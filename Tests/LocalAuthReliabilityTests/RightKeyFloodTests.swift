// S-81 against the real daemon: an unprivileged uid that floods its right's
// key gets at most a few operations queued (the rest `busy` at once), and
// no more than its log budget allows (S-48: `limit-exceeded`, nothing
// recorded), while another user is served meanwhile; and what the log says
// of keys (S-78, S-79: the operation and the algorithm, never the data).
// Counted from the replies and the log, never timed.
import Foundation
import LocalAuthCore
import LocalAuthKeys
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class RightKeyFloodTests: ReliabilityTestCase {
    let attackerUID: UInt32 = 65534
    let bystanderUID: UInt32 = 65533
    let sign = "algid:sign:ECDSA:message-X962:SHA256"

    /// A right of `uid`'s, authorized on a context of `client`'s (the admin feeds the finger).
    private func authorizedRight(_ admin: Client, _ client: Client, uid: UInt32) throws -> String {
        XCTAssertOK(try client.request("s right-save identifier=flood requirement=biometry"))
        let ctx = try newContext(client)
        try client.send("a right-authorize ctx=\(ctx) identifier=flood reason=flood")
        XCTAssertEqual(try client.next(tag: "a").status, .prompt)
        XCTAssertOK(try admin.request("\(tag("m")) sensor uid=\(uid) result=match"))
        XCTAssertOK(try client.next(tag: "a"))
        return ctx
    }

    private func keyUses(_ daemon: DaemonProcess, uid: UInt32) throws -> Int {
        try LogContents(stateDirectory: daemon.stateDirectory).events.filter {
            $0.body.kind == .rightKeyUsed && $0.body.uid == UserID(uid)
        }.count
    }

    func test_S81_aPipelinedFloodOfSignsQueuesAtMostFourAndTheRestAreBusyWhileOthersAreServed() throws {
        let daemon = try startDaemon(configuration: configuration(log: ["UserEventRate=0"]))
        let admin = try daemon.connect()
        try prepareUser(admin, uid: attackerUID, passcode: Secrets.make("K3yFlooder"))
        try prepareUser(admin, uid: bystanderUID, passcode: Secrets.make("K3yBystander"))
        let attacker = try daemon.connect(asUID: attackerUID)
        let ctx = try authorizedRight(admin, attacker, uid: attackerUID)
        let bystander = try daemon.connect(asUID: bystanderUID)
        let theirs = try authorizedRight(admin, bystander, uid: bystanderUID)

        let flood = 40
        let lines = (0..<flood).map { "f\($0) right-sign ctx=\(ctx) identifier=flood algorithm=\(sign) data=AAAA" }
        try attacker.sendRaw(Array(lines.map { $0 + "\n" }.joined().utf8))
        // The bystander's key works while the flood is in.
        XCTAssertOK(try bystander.request("b right-sign ctx=\(theirs) identifier=flood algorithm=\(sign) data=AAAA"))
        var replies: [Response] = []
        for _ in 0..<flood { replies.append(try attacker.next()) }
        let busy = replies.filter { $0.errorName == "busy" }
        let signed = replies.filter { $0.status == .ok && $0["signature"] != nil }
        XCTAssertEqual(busy.count + signed.count, flood, "every request answered, signed or busy: \(replies.suffix(2))")
        XCTAssertGreaterThanOrEqual(signed.count, 5, "one running and four waiting")
        XCTAssertGreaterThan(busy.count, 0, "the flood was not limited")
        XCTAssertTrue(busy.first?["message"]?.contains("At most 4") == true, "\(busy.first.map(String.init(describing:)) ?? "")")
        XCTAssertEqual(try keyUses(daemon, uid: attackerUID), signed.count, "a busy request recorded nothing")
        // Once its answers are read, the attacker may queue again.
        XCTAssertOK(try attacker.request("g right-sign ctx=\(ctx) identifier=flood algorithm=\(sign) data=AAAA"))
    }

    /// S-78, S-79, S-39: the log says which right, which operation, which
    /// algorithm and which public key; never the data, a result or a key
    /// (the teardown searches the state directory and the output for the
    /// registered message and plaintext).
    func test_S78_S79_keysAreRecordedByOperationAndAlgorithmNeverByTheirData() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("p set-passcode secret=\(Secrets.make("K3yLogOwner"))"))
        XCTAssertOK(try admin.request("e enroll uid=0"))
        let ctx = try authorizedRight(admin, admin, uid: 0)
        let publicKey = Array(Data(base64Encoded: try XCTUnwrap(try admin.request("k right-public-key identifier=flood")["public-key"]))!)
        let message = Secrets.make("K3y-Signed-Message-Never-Logged")
        XCTAssertOK(try admin.request("g right-sign ctx=\(ctx) identifier=flood algorithm=\(sign) data=\"\(Data(message.utf8).base64EncodedString())\""))
        let plaintext = Secrets.make("K3y-Decrypted-Plaintext-Never-Logged")
        let sealed = ECIES.encrypt(Array(plaintext.utf8), to: try XCTUnwrap(P256PublicKey(x963: publicKey)),
                                   ECIES.Variant(digest: .sha256, variableIV: true))
        let opened = try admin.request("d right-decrypt ctx=\(ctx) identifier=flood "
            + "algorithm=algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV data=\"\(Data(sealed).base64EncodedString())\"")
        XCTAssertEqual(opened["data"], Data(plaintext.utf8).base64EncodedString())
        XCTAssertOK(try admin.request("z ping"))
        let events = try LogContents(stateDirectory: daemon.stateDirectory).events.map(\.body)
        let created = events.compactMap { body -> String? in
            if case .rightKeyCreated(0, "flood", let digest) = body { return digest }
            return nil
        }
        XCTAssertEqual(created, [SHA256.hash(publicKey).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()])
        let used = events.compactMap { body -> (String, String)? in
            if case .rightKeyUsed(0, _, "flood", let algorithm) = body { return (algorithm.operation.wireName, algorithm.name) }
            return nil
        }
        XCTAssertEqual(used.map(\.0), ["sign", "decrypt"])
        XCTAssertEqual(used.map(\.1), [sign, "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV"])
    }

    func test_S81_S48_keyOperationsAreChargedToTheUsersLogBudget() throws {
        let burst = 12
        let daemon = try startDaemon(configuration: configuration(log: ["UserEventRate=1", "UserEventBurst=\(burst)"]))
        let admin = try daemon.connect()
        try prepareUser(admin, uid: attackerUID, passcode: Secrets.make("K3yBudget"))
        let attacker = try daemon.connect(asUID: attackerUID)
        let ctx = try authorizedRight(admin, attacker, uid: attackerUID)
        var signed = 0
        var refused: Response?
        for attempt in 0..<(burst * 3) {
            let reply = try attacker.request("g\(attempt) right-sign ctx=\(ctx) identifier=flood algorithm=\(sign) data=AAAA")
            if reply.status == .ok { signed += 1; continue }
            refused = reply
            break
        }
        let refusal = try XCTUnwrap(refused, "\(burst * 3) signs with a burst of \(burst) were never refused")
        XCTAssertProtocolError(refusal, "limit-exceeded")
        XCTAssertTrue(refusal["message"]?.contains("UserEventRate=1") == true, "\(refusal)")
        XCTAssertLessThan(signed, burst, "the save and the authorization took their share")
        XCTAssertEqual(try keyUses(daemon, uid: attackerUID), signed, "the refused sign recorded nothing")
        // The administrator is not limited, and may still read the attacker's status.
        XCTAssertOK(try admin.request("st status uid=\(attackerUID)"))
    }
}
