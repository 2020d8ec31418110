// The D-Bus API's pure mappings (BusReplies, BusObject, BusFront's S-72
// checks): the protocol's lines as D-Bus values, given the PROMPT and
// final lines PROTOCOL.md documents, including every prompt kind of v1.2
// and v1.3 (one table: a new kind needs no change).
import LocalAuthProtocol
@testable import LocalAuthServer
import LocalAuthSystem
import XCTest

final class BusMappingTests: XCTestCase {
    private func line(_ text: String) throws -> Response { try Response.parse(text) }

    func test_S70_everyPromptKindOfTheProtocolIsOnePromptSignalWithItsFieldsTyped() throws {
        let lines = [
            "e1 PROMPT kind=biometric attempt=2 biometry=touchID reason=\"unlock\" cancel=Cancel fallback=\"Enter Password\" message=\"Try again.\"",
            "e1 PROMPT kind=passcode reason=unlock cancel=Cancel attempts-left=6",
            "e1 PROMPT kind=biometric-or-passcode attempt=1 biometry=faceID reason=unlock cancel=Cancel attempts-left=6",
            "e1 PROMPT kind=biometric attempt=1 biometry=opticID reason=x cancel=Cancel retry-after=60 message=\"Passcode entry is disabled.\"",
            "e1 PROMPT kind=agent",
            "e1 PROMPT kind=a-later-kind shape=new",
        ]
        let kinds = try lines.map { try BusReplies.prompt(line($0))[0] }
        XCTAssertEqual(kinds, [.string("biometric"), .string("passcode"), .string("biometric-or-passcode"), .string("biometric"),
                               .string("agent"), .string("a-later-kind")])
        XCTAssertEqual(try BusReplies.prompt(line(lines[0]))[1], .dictionary([
            DBusEntry("attempt", .uint32(2)), DBusEntry("biometry", .uint32(1)), DBusEntry("reason", .string("unlock")),
            DBusEntry("cancel", .string("Cancel")), DBusEntry("fallback", .string("Enter Password")),
            DBusEntry("message", .string("Try again.")),
        ]))
        XCTAssertEqual(try BusReplies.prompt(line(lines[2]))[1], .dictionary([
            DBusEntry("attempt", .uint32(1)), DBusEntry("biometry", .uint32(2)), DBusEntry("reason", .string("unlock")),
            DBusEntry("cancel", .string("Cancel")), DBusEntry("attempts-left", .uint32(6)),
        ]))
        XCTAssertEqual(try BusReplies.prompt(line(lines[3]))[1], .dictionary([
            DBusEntry("attempt", .uint32(1)), DBusEntry("biometry", .uint32(4)), DBusEntry("reason", .string("x")),
            DBusEntry("cancel", .string("Cancel")), DBusEntry("retry-after", .uint32(60)),
            DBusEntry("message", .string("Passcode entry is disabled.")),
        ]))
        XCTAssertEqual(try BusReplies.prompt(line(lines[4]))[1], .dictionary([]))
        XCTAssertEqual(try BusReplies.prompt(line(lines[5]))[1], .dictionary([DBusEntry("shape", .string("new"))]),
                       "an unknown key travels as a string")
    }

    func test_S33_theFinalAnswerIsOneCompletedWithTheReplysFields() throws {
        XCTAssertEqual(try BusReplies.completed(line("e1 OK method=biometric domain-state=0a0b")), [
            .boolean(true), .string("biometric"), .int32(0), .string(""),
            .dictionary([DBusEntry("domain-state", .bytes([10, 11]))]),
        ])
        XCTAssertEqual(try BusReplies.completed(line(
            "e1 OK method=passcode failed-attempts=1 failed-biometric=1 failed-passcode=0 refused-passcode=0 last-failed-at=1780000000 last-failed-service=sudo")), [
            .boolean(true), .string("passcode"), .int32(0), .string(""),
            .dictionary([DBusEntry("failed-attempts", .uint32(1)), DBusEntry("failed-biometric", .uint32(1)),
                         DBusEntry("failed-passcode", .uint32(0)), DBusEntry("refused-passcode", .uint32(0)),
                         DBusEntry("last-failed-at", .int64(1_780_000_000)), DBusEntry("last-failed-service", .string("sudo"))]),
        ])
        XCTAssertEqual(try BusReplies.completed(line(
            "e1 ERR domain=la code=-1 name=authenticationFailed message=\"Passcode entry is disabled.\" retry-after=60")), [
            .boolean(false), .string(""), .int32(-1), .string("authenticationFailed"),
            .dictionary([DBusEntry("domain", .string("la")), DBusEntry("message", .string("Passcode entry is disabled.")),
                         DBusEntry("retry-after", .uint32(60))]),
        ])
        XCTAssertEqual(try BusReplies.completed(line("e1 ERR domain=protocol name=unavailable message=\"no log\"")), [
            .boolean(false), .string(""), .int32(0), .string("io.github.localauthd.LocalAuthentication1.Error.Unavailable"),
            .dictionary([DBusEntry("domain", .string("protocol")), DBusEntry("message", .string("no log"))]),
        ])
    }

    func test_S72_everyProtocolErrorHasItsDBusName() {
        for name in ProtocolErrorName.allCases {
            let dbus = BusReplies.errorName(protocol: name.wireName)
            if name == .unknownContext {
                XCTAssertEqual(dbus, "org.freedesktop.DBus.Error.UnknownObject", "S-71: as a path that never existed")
                continue
            }
            XCTAssertTrue(dbus.hasPrefix("io.github.localauthd.LocalAuthentication1.Error."), dbus)
            let last = dbus.split(separator: ".").last.map(String.init) ?? ""
            XCTAssertTrue(last.allSatisfy { $0.isLetter } && last.first?.isUppercase == true, "\(name) -> \(dbus)")
        }
        XCTAssertEqual(BusReplies.errorName(protocol: "permission-denied"),
                       "io.github.localauthd.LocalAuthentication1.Error.PermissionDenied")
    }

    func test_S71_onlyTheAPIsPathsAreObjects() {
        let root = "/io/github/localauthd/LocalAuthentication1"
        XCTAssertEqual(BusObject(path: root), .root)
        XCTAssertEqual(BusObject(path: root + "/context/8c1f0a6e2b7d4e59a0c3f1d2e4b5a697"), .context("8c1f0a6e2b7d4e59a0c3f1d2e4b5a697"))
        XCTAssertEqual(BusObject(path: root + "/request/12"), .request(12))
        XCTAssertEqual(BusObject(path: root + "/user/self"), .userSelf)
        XCTAssertEqual(BusObject(path: root + "/user"), .node("user"))
        for path in [root + "/context/8C1F0A6E2B7D4E59A0C3F1D2E4B5A697", root + "/context/8c1f", root + "/request/012",
                     root + "/request/-1", root + "/request/99999999999999999999999", root + "/user/1000", root + "/user/self/x",
                     root + "1", root + "/", "/io/github/localauthd", root + "//context"] {
            XCTAssertNil(BusObject(path: path), path)
        }
    }

    func test_S72_onlyWhatALineCanCarryIsTaken() {
        XCTAssertTrue(BusFront.isCarried("unlock your notes\tnow\n"))
        XCTAssertTrue(BusFront.isCarried("Entsperren — 解锁"))
        for bad in ["\u{0}", "bell\u{7}", "esc\u{1b}[2J", "del\u{7f}"] { XCTAssertFalse(BusFront.isCarried(bad), bad.debugDescription) }
        let invalid: [UInt8] = [0x31, 0xff, 0x32]
        XCTAssertFalse(invalid.withUnsafeBytes { BusFront.isCarried($0) }, "not UTF-8")
    }

    func test_S71_theEnvironmentFollowsTheStateLine() throws {
        let state = try line("w STATE uid=1000 biometry=touchID enrolled=2 passcode-set=true locked-out=false domain-state=0a0b sensor-inaccessible=false")
        XCTAssertEqual(BusReplies.environment(state), [
            DBusEntry("Uid", .uint32(1000)), DBusEntry("BiometryType", .uint32(1)), DBusEntry("BiometryIsEnrolled", .boolean(true)),
            DBusEntry("BiometryIsLockedOut", .boolean(false)), DBusEntry("BiometryIsUsable", .boolean(true)),
            DBusEntry("BiometryStateHash", .bytes([10, 11])), DBusEntry("BuiltInSensorInaccessible", .boolean(false)),
            DBusEntry("UserPasswordIsSet", .boolean(true)),
        ])
        let locked = try line("w STATE uid=1000 biometry=touchID enrolled=2 passcode-set=true locked-out=true domain-state=0a0b")
        XCTAssertEqual(BusReplies.environment(locked)[4], DBusEntry("BiometryIsUsable", .boolean(false)))
        XCTAssertEqual(BusInterfaces.environment.properties.map(\.name), BusReplies.environment(state).map(\.key),
                       "every property of the interface, in its order")
    }
}
