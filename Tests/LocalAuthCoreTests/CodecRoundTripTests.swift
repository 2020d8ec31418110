// Every event kind and a populated state survive their binary encoding, and
// damaged payloads are refused with DecodeError instead of trapping.
import XCTest
@testable import LocalAuthCore

final class CodecRoundTripTests: XCTestCase {
    static let ctx = ContextID(hex: "8c1f0a6e2b7d4e59a0c3f1d2e4b5a697")!

    /// One sample per kind; `allKindsCovered` fails when a kind is added
    /// without a sample here.
    static let samples: [EventBody] = [
        .daemonStarted(version: "0.1.0", bootID: "b0075eed", pid: 42),
        .daemonStopped,
        .contextCreated(uid: 1000, ctx: ctx, pid: 77),
        .contextCreated(uid: 1000, ctx: ctx, pid: 77, origin: ContextOrigin(caller: 0, service: "sudo", tty: "/dev/pts/0",
                                                                            rhost: "host.example", passcodePrompts: true)),
        .contextCreated(uid: 1000, ctx: ctx, pid: 77, origin: ContextOrigin(passcodePrompts: false)),
        .contextCreated(uid: 1000, ctx: ctx, pid: 77, origin: ContextOrigin(transport: .dbus, busName: ":1.42")),
        .contextCreated(uid: 1000, ctx: ctx, pid: 77, origin: ContextOrigin(passcodePrompts: false, transport: .dbus,
                                                                            busName: ":1.7", app: "org.example.Notes")),
        .contextPropertySet(uid: 1000, ctx: ctx, property: .fallbackTitle("")),
        .contextPropertySet(uid: 1000, ctx: ctx, property: .reuseDuration(300)),
        .contextPropertySet(uid: 1000, ctx: ctx, property: .interactionNotAllowed(true)),
        .contextInvalidated(uid: 1000, ctx: ctx, reason: .restart),
        .policyChecked(uid: 1000, ctx: ctx, policy: .owner, biometry: .faceID, result: nil, reason: nil),
        .policyChecked(uid: 1000, ctx: ctx, policy: .biometrics, biometry: .opticID, result: .notInteractive, reason: "passcode-required"),
        .evaluationStarted(uid: 1000, ctx: ctx, eval: 3, policy: .biometricsOrCompanion, reason: "unlock \"notes\" ✓"),
        .promptShown(uid: 1000, ctx: ctx, eval: 3, prompt: Prompt(kind: .biometric, attempt: 2, fallbackOffered: true, message: "Try again.")),
        .promptShown(uid: 1000, ctx: ctx, eval: 3, prompt: Prompt(kind: .passcode, attemptsLeft: 6)),
        .biometricMatched(uid: 1000, ctx: ctx, eval: 3),
        .biometricFailed(uid: 4_000_000_000, ctx: ctx, eval: UInt32.max),
        .biometricRetry(uid: 1000, ctx: ctx, eval: 3, message: "Finger moved too quickly"),
        .fallbackChosen(uid: 1000, ctx: ctx, eval: 3),
        .passcodeAccepted(uid: 1000, ctx: nil, eval: nil),
        .passcodeAccepted(uid: 1000, ctx: ctx, eval: 9),
        .passcodeRejected(uid: 1000, ctx: ctx, eval: 9, counted: false),
        .evaluationSucceeded(uid: 1000, ctx: ctx, eval: 9, method: .reuse),
        .evaluationFailed(uid: 1000, ctx: ctx, eval: 9, failure: Failure(.authenticationFailed, message: "Passcode entry is disabled.", retryAfter: 60)),
        .evaluationFailed(uid: 1000, ctx: ctx, eval: 9, failure: Failure(.systemCancel, reason: "timeout", adminLocked: true)),
        .enrollmentChanged(uid: 1000, templates: ["left-thumb", "right-index"], by: 0, domainState: String(repeating: "ab", count: 16)),
        .enrollmentChanged(uid: 1000, templates: ["right-index-finger"], by: 0, domainState: String(repeating: "cd", count: 16),
                           source: .fprintd),
        .passcodeChanged(uid: 1000, set: true, by: 1000),
        .deviceUnlocked(uid: 1000, by: 0),
        .userReset(uid: 1000, by: 0),
        .logRepaired(firstLostSeq: 123_456_789, by: 0),
        .rulesApplied(.default),
        .rulesApplied(Rules(biometryType: .faceID, attemptsPerEvaluationOverride: 4, lockoutThreshold: 3, promptTimeout: 5,
                            passcodeRequiredAfter: -1, passcodeRequiredAfterBoot: true, delayAfterFailures: 2,
                            backoff: [1, 2], maxPasscodeFailures: 10)),
        .biometricDisconnected(uid: 1000, ctx: ctx, eval: 3),
        .passcodeSubmitted(uid: 1000, ctx: ctx, eval: 3),
        .contextReleased(uid: 1000, ctx: ctx),
        .passcodeRefused(uid: 1000, ctx: ctx, eval: 4, retryAfter: 3600),
        .passcodeRefused(uid: 7, ctx: nil, eval: nil, retryAfter: 0),
        .snapshotRecorded(snapshotSeq: 100_000, sha256: String(repeating: "a1", count: 32)),
        .logRollbackAccepted(journalSeq: 90_000, logSeq: 42, by: 0),
        .rightSaved(uid: 1000, identifier: "com.example.login-1", requirement: .biometryCurrentSet),
        .rightRemoved(uid: 1000, identifier: "a", requirement: .default),
        .rightAuthorized(uid: 1000, ctx: ctx, identifier: "com.example.login-1", method: .biometric),
        .rightSecretRead(uid: 1000, ctx: ctx, identifier: "com.example.login-1"),
        .rightKeyCreated(uid: 1000, identifier: "com.example.login-1", publicKeySHA256: String(repeating: "c3", count: 32)),
        .rightKeyUsed(uid: 1000, ctx: ctx, identifier: "k", algorithm: KeyAlgorithm.named("algid:sign:ECDSA:message-X962:SHA256")!),
        .rightKeyUsed(uid: 1000, ctx: ctx, identifier: "k", algorithm: KeyAlgorithm.named("algid:keyexchange:ECDHC:KDFX963:SHA512")!),
        // S-74..S-77.
        .loginSecretStored(uid: 1000, ctx: ctx, eval: 2, service: "gdm-password"),
        .loginSecretReleased(uid: 1000, ctx: ctx, eval: 3, service: "login"),
        .loginSecretVoided(uid: 1000, reason: .turnedOff),
        .loginSecretRefused(LoginSecretRefusal(uid: 1000, caller: 1000, reason: .notRoot)),
        .loginSecretRefused(LoginSecretRefusal(uid: 1000, caller: 0, ctx: ctx, eval: 4, service: "lightdm", reason: .stale)),
        .loginSecretChoice(uid: 1000, enabled: false, by: 0),
        .rightDropped(uid: 1000, identifier: "com.example.login-1", requirement: .biometry, name: "alice", reason: .accountReplaced),
        .rightDropped(uid: 1000, identifier: "k", requirement: .default, name: nil, reason: .accountRemoved),
        .policyCheckedRepeatedly(RepeatedChecks(uid: 1000, ctx: ctx, policy: .biometrics, biometry: .touchID, result: nil,
                                                reason: nil, count: 2, span: 0)),
        .policyCheckedRepeatedly(RepeatedChecks(uid: 4_000_000_000, ctx: ctx, policy: .owner, biometry: .faceID,
                                                result: .notInteractive, reason: "passcode-required", count: .max,
                                                span: 86_400_000_000)),
        // S-60..S-63.
        .promptShown(uid: 1000, ctx: ctx, eval: 3, prompt: Prompt(kind: .biometricOrPasscode, attempt: 2, attemptsLeft: 5,
                                                                    message: "Wrong passcode.")),
        .promptShown(uid: 1000, ctx: ctx, eval: 3, prompt: Prompt(kind: .biometric, attempt: 2, fallbackOffered: true,
                                                                    message: "Passcode entry is disabled.", retryAfter: 60)),
        .promptHalfEnded(uid: 1000, ctx: ctx, eval: 3, half: .biometric, reason: .lockout, retryAfter: 0),
        .promptHalfEnded(uid: 1000, ctx: ctx, eval: 3, half: .passcode, reason: .delay, retryAfter: 3600),
        .biometrySkipped(uid: 1000, ctx: ctx, eval: 1, reason: .remote, detail: "laptop.example.org"),
        .biometrySkipped(uid: 1000, ctx: ctx, eval: 1, reason: .lidClosed, detail: nil),
        .systemSleep(suspending: true),
        .systemSleep(suspending: false),
        .contextPropertySet(uid: 1000, ctx: ctx, property: .prompt(.agent)),
        .agentRegistered(uid: 1000, session: "c12", pid: 515),
        .agentUnregistered(uid: 1000, session: "2", pid: .max, reason: .shutdown),
        .promptsRouted(uid: 1000, ctx: ctx, eval: 3, route: AgentRoute(session: "c12", agentPID: 515, passcodePrompts: false)),
        .agentRefused(AgentRefusal(uid: 1001, pid: 616, request: .registerAgent, reason: .notSessionOwner, session: "c12")),
        .agentRefused(AgentRefusal(uid: 1000, pid: 77, request: .passcode, reason: .promptsBelongToAgent, ctx: ctx, eval: 3)),
    ]

    func testEveryEventKindRoundTrips() throws {
        for body in Self.samples {
            let bytes = EventCodec.encode(body)
            let decoded = try EventCodec.decode(kind: body.kind.rawValue, payload: bytes)
            XCTAssertEqual(decoded, body)
        }
    }

    func testAllKindsCovered() {
        let covered = Set(Self.samples.map(\.kind))
        XCTAssertEqual(covered, Set(EventKind.allCases))
    }

    func testEveryKindHasOneStableName() {
        let names = EventKind.allCases.map(\.name)
        XCTAssertEqual(Set(names).count, names.count)
        for kind in EventKind.allCases { XCTAssertEqual(EventKind(name: kind.name), kind) }
        XCTAssertEqual(EventKind.biometricFailed.name, "biometric-failed")
        XCTAssertEqual(EventKind.logRepaired.name, "log-repaired")
    }

    func testTruncatedOrExtendedPayloadsAreRefused() {
        for body in Self.samples {
            let bytes = EventCodec.encode(body)
            for cut in 0..<bytes.count {
                XCTAssertThrowsError(try EventCodec.decode(kind: body.kind.rawValue, payload: Array(bytes[0..<cut])))
            }
            XCTAssertThrowsError(try EventCodec.decode(kind: body.kind.rawValue, payload: bytes + [0]))
        }
    }

    func testFlippedBitsNeverTrap() {
        for body in Self.samples {
            let bytes = EventCodec.encode(body)
            for index in bytes.indices {
                for bit in 0..<8 {
                    var damaged = bytes
                    damaged[index] ^= UInt8(1 << bit)
                    _ = try? EventCodec.decode(kind: body.kind.rawValue, payload: damaged)
                }
            }
        }
    }

    func test_S65_sessionIdsOutsideLogindsGrammarAreCorrupt() {
        for bad in ["", "../2", "c 1", "é", String(repeating: "9", count: 65)] {
            let bytes = EventCodec.encode(.agentRegistered(uid: 1000, session: bad, pid: 1))
            XCTAssertThrowsError(try EventCodec.decode(kind: EventKind.agentRegistered.rawValue, payload: bytes), bad)
        }
    }

    func testUnknownKindIsRefused() {
        XCTAssertThrowsError(try EventCodec.decode(kind: 999, payload: [1]))
    }

    func testStateRoundTrips() throws {
        var state = AuthState()
        var time: Int64 = 1_700_000_000_000_000
        for body in Self.samples where body != .daemonStopped {
            time += 1
            state.apply(Event(time: time, body))
        }
        // A context with a running evaluation at a prompt.
        let other = ContextID(high: 1, low: 2)
        state.apply(Event(time: time + 1, .contextCreated(uid: 7, ctx: other, pid: 1)))
        state.apply(Event(time: time + 2, .evaluationStarted(uid: 7, ctx: other, eval: 1, policy: .owner, reason: "r")))
        state.apply(Event(time: time + 3, .promptShown(uid: 7, ctx: other, eval: 1, prompt: Prompt(kind: .passcode, attemptsLeft: 3))))
        // One whose prompts go to its session's agent (version 3).
        let routed = ContextID(high: 3, low: 4)
        state.apply(Event(time: time + 4, .contextCreated(uid: 7, ctx: routed, pid: 2)))
        state.apply(Event(time: time + 4, .contextPropertySet(uid: 7, ctx: routed, property: .prompt(.agent))))
        state.apply(Event(time: time + 5, .evaluationStarted(uid: 7, ctx: routed, eval: 1, policy: .biometrics, reason: "r")))
        state.apply(Event(time: time + 5, .promptsRouted(uid: 7, ctx: routed, eval: 1,
                                                         route: AgentRoute(session: "4", agentPID: 9, passcodePrompts: true))))
        XCTAssertNotNil(state.contexts[routed]?.evaluation?.route)
        let bytes = StateCodec.encode(state)
        XCTAssertEqual(try StateCodec.decode(bytes), state)
        XCTAssertEqual(StateCodec.encode(try StateCodec.decode(bytes)), bytes, "encoding is deterministic")
        for cut in stride(from: 0, to: bytes.count, by: 3) {
            XCTAssertThrowsError(try StateCodec.decode(Array(bytes[0..<cut])))
        }
    }

    func testContextIDHexRoundTrip() {
        let id = Self.ctx
        XCTAssertEqual(id.hex, "8c1f0a6e2b7d4e59a0c3f1d2e4b5a697")
        XCTAssertEqual(ContextID(bytes: id.bytes), id)
        XCTAssertEqual(ContextID(hex: "8C1F0A6E2B7D4E59A0C3F1D2E4B5A697"), id)
        XCTAssertNil(ContextID(hex: "8c1f"))
        XCTAssertNil(ContextID(hex: "zz1f0a6e2b7d4e59a0c3f1d2e4b5a697"))
    }

    /// The eight-digits-at-a-time parse against a digit-by-digit reading:
    /// every byte value at every position, and random ids in both cases.
    func testContextIDHexTakesExactlyHexDigitsAtEveryPosition() {
        func reference(_ bytes: [UInt8]) -> ContextID? {
            guard bytes.count == 32 else { return nil }
            var words: [UInt64] = [0, 0]
            for (index, byte) in bytes.enumerated() {
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x41...0x46: digit = byte - 0x41 + 10
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: return nil
                }
                words[index / 16] = words[index / 16] << 4 | UInt64(digit)
            }
            return ContextID(high: words[0], low: words[1])
        }
        let base = Array(Self.ctx.hex.utf8)
        for position in 0..<32 {
            for byte in UInt8.min...UInt8.max {
                var bytes = base
                bytes[position] = byte
                let parsed = bytes.withUnsafeBufferPointer { ContextID(hex: $0) }
                XCTAssertEqual(parsed, reference(bytes), "byte \(byte) at \(position)")
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let id = ContextID(high: generator.next(), low: generator.next())
            XCTAssertEqual(ContextID(hex: id.hex), id)
            XCTAssertEqual(ContextID(hex: id.hex.uppercased()), id)
        }
        XCTAssertNil(ContextID(hex: String(Self.ctx.hex.dropLast())))
        XCTAssertNil(ContextID(hex: Self.ctx.hex + "0"))
        XCTAssertNil(ContextID(hex: ""))
    }

    /// Context ids hash without SipHash (`_rawHashValue`): tables still find
    /// every id, ids equal in high^low stay distinct keys, and the table's
    /// seed changes the hash (two tables order the same ids differently).
    func testContextIDsInHashTables() {
        var generator = SystemRandomNumberGenerator()
        var ids: [ContextID] = (0..<5000).map { _ in ContextID(high: generator.next(), low: generator.next()) }
        // Same high^low (the same hash), different ids.
        ids += (0..<64).map { ContextID(high: UInt64($0), low: UInt64($0)) }
        var table: [ContextID: Int] = [:]
        for (index, id) in ids.enumerated() { table[id] = index }
        XCTAssertEqual(table.count, ids.count)
        for (index, id) in ids.enumerated() { XCTAssertEqual(table[id], index) }
        XCTAssertNil(table[ContextID(high: 1, low: 2)])
        let set = Set(ids)
        XCTAssertEqual(set.count, ids.count)
        XCTAssertTrue(ids.allSatisfy(set.contains))
        XCTAssertNotEqual(ids[0]._rawHashValue(seed: 1), ids[0]._rawHashValue(seed: 2))
        XCTAssertEqual(ids[0]._rawHashValue(seed: 7), ids[0]._rawHashValue(seed: 7))
        for id in ids.prefix(100) { table[id] = nil }
        XCTAssertEqual(table.count, ids.count - 100)
        XCTAssertTrue(ids.dropFirst(100).allSatisfy { table[$0] != nil })
    }

    func testConstantsHaveApplesRawValuesAndModernWireNames() {
        XCTAssertEqual(Policy.allCases.map(\.rawValue), [1, 2, 3, 4, 5])
        XCTAssertEqual(BiometryType.allCases.map(\.rawValue), [0, 1, 2, 4])
        XCTAssertEqual(LAErrorCode.allCases.map(\.rawValue), [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -1004])
        XCTAssertEqual(LAErrorCode.touchIDLockout.wireName, "biometryLockout")
        XCTAssertEqual(LAErrorCode.touchIDNotEnrolled, .biometryNotEnrolled)
        XCTAssertEqual(LAErrorCode.watchNotAvailable.rawValue, -11)
        for code in LAErrorCode.allCases { XCTAssertEqual(LAErrorCode(wireName: code.wireName), code) }
        for policy in Policy.allCases {
            XCTAssertEqual(Policy(wireName: policy.wireName), policy)
            XCTAssertEqual(Policy(wireName: String(policy.rawValue)), policy)
        }
        XCTAssertEqual(Policy(wireName: "deviceOwnerAuthenticationWithBiometrics"), .biometrics)
        XCTAssertEqual(Policy(wireName: "deviceOwnerAuthentication"), .owner)
        for type in BiometryType.allCases { XCTAssertEqual(BiometryType(wireName: type.wireName), type) }
    }

    /// The byte lookup (the server's hot path) and the String one agree on
    /// every spelling, and neither takes a near miss.
    func testPolicySpellingsFromBytesAndStrings() {
        func fromBytes(_ text: String) -> Policy? {
            Array(text.utf8).withUnsafeBufferPointer { Policy(wireName: $0) }
        }
        XCTAssertEqual(Policy.spellings.count, 19)
        for (name, policy) in Policy.spellings {
            XCTAssertEqual(fromBytes(name), policy, name)
            XCTAssertEqual(Policy(wireName: name), policy, name)
            for miss in [String(name.dropLast()), name + "s", name.uppercased(), " " + name, name + "\0"] where miss != name {
                let expected = Policy.spellings.first { $0.0 == miss }?.1
                XCTAssertEqual(fromBytes(miss), expected, miss)
                XCTAssertEqual(Policy(wireName: miss), expected, miss)
            }
        }
        for miss in ["", "0", "6", "biometric", "Owner", "owner\n", "wrist ", "\u{00E9}"] {
            XCTAssertNil(fromBytes(miss), miss)
            XCTAssertNil(Policy(wireName: miss), miss)
        }
        XCTAssertNil(Policy(wireName: UnsafeBufferPointer<UInt8>(start: nil, count: 0)))
        // The short names are matched before the table: a change at any one
        // byte, same length, is no policy.
        for name in ["biometrics", "owner", "companion", "wrist"] {
            for index in name.utf8.indices {
                var bytes = Array(name.utf8)
                bytes[name.utf8.distance(from: name.utf8.startIndex, to: index)] ^= 0x01
                XCTAssertNil(bytes.withUnsafeBufferPointer { Policy(wireName: $0) }, String(decoding: bytes, as: UTF8.self))
            }
        }
        for byte in UInt8(0)...UInt8(255) where !(UInt8(ascii: "1")...UInt8(ascii: "5")).contains(byte) {
            XCTAssertNil([byte].withUnsafeBufferPointer { Policy(wireName: $0) }, "byte \(byte)")
        }
    }
}
