// The passcode rules that were the daemon's and are the core's now: what a
// secret on the wire must be (PROTOCOL.md `passcode`, `set-passcode`), when a
// change needs the old passcode (S-36), and S-7's memory of the last wrong
// passcode, which lives beside AuthState, never in it.

import XCTest
@testable import LocalAuthCore

final class PasscodeSecretRuleTests: XCTestCase {
    private func rejection<T>(_ result: Result<T, Rejection>) -> Rejection? {
        if case .failure(let rejection) = result { return rejection }
        return nil
    }

    private func accepted(_ result: Result<String, Rejection>) -> String? {
        if case .success(let secret) = result { return secret }
        return nil
    }

    private let tooShort = Rejection(.badArgument, "A passcode needs at least 4 characters.")

    // MARK: - A new passcode

    func test_S36_aNewPasscodeNeedsFourCharactersCountedAsTypedNotAsBytes() {
        XCTAssertEqual(rejection(PasscodeSecret.new("abc")), tooShort)
        XCTAssertEqual(accepted(PasscodeSecret.new("abcd")), "abcd")
        XCTAssertEqual(rejection(PasscodeSecret.new("😀😀😀")), tooShort, "12 bytes, 3 characters")
        XCTAssertEqual(accepted(PasscodeSecret.new("ab😀😀")), "ab😀😀")
        XCTAssertEqual(rejection(PasscodeSecret.new("e\u{301}e\u{301}e\u{301}")), tooShort,
                       "combining marks make one character each")
    }

    func test_S36_anEmptyOrMissingNewPasscodeIsRefused() {
        XCTAssertEqual(rejection(PasscodeSecret.new("")), tooShort)
        XCTAssertEqual(rejection(PasscodeSecret.new(nil)), Rejection(.missingArgument, "secret= is required."))
    }

    func test_aSecretIsLimitedTo511BytesAndTheRefusalNamesItsKey() {
        let limit = String(repeating: "x", count: 511)
        XCTAssertEqual(accepted(PasscodeSecret.new(limit)), limit)
        XCTAssertEqual(accepted(PasscodeSecret.attempt(limit)), limit)
        XCTAssertEqual(rejection(PasscodeSecret.new(limit + "x")),
                       Rejection(.badArgument, "secret= is limited to 511 bytes."))
        XCTAssertEqual(rejection(PasscodeSecret.attempt(limit + "x")),
                       Rejection(.badArgument, "secret= is limited to 511 bytes."))
        // 170 three-byte characters and two bytes more: 512 bytes, 172 characters.
        XCTAssertEqual(rejection(PasscodeSecret.new(String(repeating: "€", count: 170) + "xx")),
                       Rejection(.badArgument, "secret= is limited to 511 bytes."))
    }

    func test_S5_anAttemptMayBeAnythingUpToTheLimitEvenEmpty() {
        XCTAssertEqual(accepted(PasscodeSecret.attempt("")), "", "an empty attempt is checked (and counted) like any")
        XCTAssertEqual(accepted(PasscodeSecret.attempt("1")), "1")
        XCTAssertEqual(rejection(PasscodeSecret.attempt(nil)), Rejection(.missingArgument, "secret= is required."))
    }

    // MARK: - S-50: the same rules over bytes (the daemon holds no String of a secret)

    private func bytesRule<R>(_ text: String?, _ rule: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let text else { return rule(nil) }
        return Array(text.utf8).withUnsafeBufferPointer { rule($0) }
    }

    func test_S50_givenASecretsBytes_thenTheRulesJudgeItAsTheyJudgeItsString() {
        let secrets: [String?] = [nil, "", "a", "abc", "abcd", "😀😀😀", "ab😀😀", "e\u{301}e\u{301}e\u{301}",
                                  "e\u{301}e\u{301}e\u{301}e\u{301}", "\r\n\r\n\r\n", "🇫🇷🇫🇷🇫🇷🇫🇷", "🇫🇷🇫🇷🇫",
                                  String(repeating: "x", count: 511), String(repeating: "x", count: 512),
                                  String(repeating: "€", count: 170) + "xx", String(repeating: "€", count: 170) + "x"]
        for secret in secrets {
            let note = String(describing: secret.map { $0.prefix(12) })
            XCTAssertEqual(bytesRule(secret) { PasscodeSecret.refusal(ofNew: $0) }, rejection(PasscodeSecret.new(secret)), note)
            for key in ["secret", "old-secret"] {
                XCTAssertEqual(bytesRule(secret) { PasscodeSecret.refusal(ofAttempt: $0, key: key) },
                               rejection(PasscodeSecret.attempt(secret, key: key)), note)
            }
            for (own, stored) in [(true, true), (true, false), (false, true), (false, false)] {
                let plan = PasscodeChange.plan(own: own, stored: stored, oldSecret: secret)
                let bytes = bytesRule(secret) { PasscodeChange.mustProveOldSecret(own: own, stored: stored, oldSecret: $0) }
                switch (plan, bytes) {
                case (.failure(let a), .failure(let b)): XCTAssertEqual(a, b, note)
                case (.success(.proveOldSecret), .success(true)), (.success(.setNew), .success(false)): break
                default: XCTFail("\(note) own \(own) stored \(stored): \(plan) vs \(bytes)")
                }
            }
        }
        // Characters as String counts them, whatever the bytes (invalid UTF-8 reads as U+FFFD).
        for bytes: [UInt8] in [[0xFF, 0xFE, 0x41, 0x42], [0xC3], [0x65, 0xCC, 0x81, 0xFF], [0xF0, 0x9F, 0x98]] {
            let count = bytes.withUnsafeBufferPointer { PasscodeSecret.characters(in: $0, upTo: 100) }
            XCTAssertEqual(count, String(decoding: bytes, as: UTF8.self).count, "\(bytes)")
        }
    }

    // MARK: - S-36: changing a passcode

    func test_S36_changingOnesOwnStoredPasscodeNeedsTheOldOneWithinTheLimit() {
        XCTAssertEqual(rejection(PasscodeChange.plan(own: true, stored: true, oldSecret: nil)),
                       Rejection(.missingArgument, "old-secret= is required to change an existing passcode."))
        XCTAssertEqual(rejection(PasscodeChange.plan(own: true, stored: true, oldSecret: String(repeating: "o", count: 512))),
                       Rejection(.badArgument, "old-secret= is limited to 511 bytes."))
        guard case .success(.proveOldSecret(let old)) = PasscodeChange.plan(own: true, stored: true, oldSecret: "") else {
            return XCTFail("an empty old secret is an attempt to check")
        }
        XCTAssertEqual(old, "")
    }

    func test_S36_anAdministratorOrAFirstPasscodeNeedsNoOldOneAndAnyGivenIsIgnored() {
        let huge = String(repeating: "o", count: 600)
        guard case .success(.setNew) = PasscodeChange.plan(own: false, stored: true, oldSecret: huge) else {
            return XCTFail("an administrator sets another user's passcode without the old one")
        }
        guard case .success(.setNew) = PasscodeChange.plan(own: true, stored: false, oldSecret: nil) else {
            return XCTFail("a first passcode has no old one")
        }
        guard case .success(.setNew) = PasscodeChange.plan(own: false, stored: false, oldSecret: "x") else {
            return XCTFail("nothing to prove")
        }
    }

    // MARK: - S-7: the same wrong passcode twice in a row

    func test_S7_theSameWrongPasscodeTwiceInARowIsARepeatPerUser() {
        var memory = WrongPasscodeMemory()
        let one: [UInt8] = [1, 2, 3], two: [UInt8] = [4, 5, 6]
        XCTAssertFalse(memory.isRepeat(alice, correct: false, fingerprint: one), "the first wrong one counts")
        XCTAssertTrue(memory.isRepeat(alice, correct: false, fingerprint: one), "the same again does not")
        XCTAssertFalse(memory.isRepeat(bob, correct: false, fingerprint: one), "another user's memory is their own")
        XCTAssertFalse(memory.isRepeat(alice, correct: false, fingerprint: two), "a different wrong one counts")
        XCTAssertFalse(memory.isRepeat(alice, correct: false, fingerprint: one), "in a row only: A B A counts A twice")
    }

    func test_S7_aRightPasscodeANewPasscodeOrAResetForgetsTheLastWrongOne() {
        var memory = WrongPasscodeMemory()
        let wrong: [UInt8] = [9, 9]
        _ = memory.isRepeat(alice, correct: false, fingerprint: wrong)
        XCTAssertFalse(memory.isRepeat(alice, correct: true, fingerprint: [7]))
        XCTAssertFalse(memory.isRepeat(alice, correct: false, fingerprint: wrong), "after a right one it counts again")

        memory.fold(.passcodeChanged(uid: alice, set: true, by: admin))
        XCTAssertFalse(memory.isRepeat(alice, correct: false, fingerprint: wrong), "a new passcode: counts again")

        memory.fold(.userReset(uid: alice, by: admin))
        XCTAssertFalse(memory.isRepeat(alice, correct: false, fingerprint: wrong), "a reset: counts again")

        memory.fold(.passcodeChanged(uid: bob, set: false, by: admin))
        memory.fold(.deviceUnlocked(uid: alice, by: admin))
        XCTAssertTrue(memory.isRepeat(alice, correct: false, fingerprint: wrong), "other events forget nothing")
    }

    func test_S7_theMemoryNeverShowsAFingerprint() {
        var memory = WrongPasscodeMemory()
        _ = memory.isRepeat(alice, correct: false, fingerprint: [0xAB, 0xCD])
        XCTAssertEqual("\(memory)", "WrongPasscodeMemory(1 users)")
        XCTAssertFalse(String(reflecting: memory).contains("171"), "0xAB, as a debugger or a crash report would print it")
    }
}
