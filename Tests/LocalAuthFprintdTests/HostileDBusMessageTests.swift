// Hostile D-Bus input (S-43, "every input is hostile until parsed"):
// messages built with sd-bus itself, with wrong signatures, unknown
// statuses, odd finger names, too many or too long values, go through the
// parsers the fprintd backend uses. None traps; none reads as a reading or
// a template. No bus daemon is needed: the messages are made on one end of
// a socketpair and sealed.
import Glibc
import LocalAuthCore
@testable import LocalAuthServer
import LocalAuthSystem
import XCTest

final class HostileDBusMessageTests: XCTestCase {
    var connection: DBusConnection!
    var peer: Int32 = -1

    override func setUpWithError() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw SystemError.current("socketpair") }
        peer = fds[1]
        connection = try DBusConnection(socket: fds[0])
    }

    override func tearDown() {
        connection?.close()
        connection = nil
        if peer >= 0 { close(peer) }
    }

    func message(_ member: String, _ arguments: [DBusArgument], path: String = "/net/reactivated/Fprint/Device/0",
                 interface: String = "net.reactivated.Fprint.Device") throws -> DBusOwnedMessage {
        try connection.makeMessage(signalPath: path, interface: interface, member: member, arguments: arguments)
    }

    func test_S43_verifyStatusMapsEveryKnownResultAndNothingElse() throws {
        let table: [(String, SensorReading)] = [
            ("verify-match", .match), ("verify-no-match", .noMatch),
            ("verify-retry-scan", .retry(message: "Scan your finger again.")),
            ("verify-swipe-too-short", .retry(message: "Swipe was too short; try again.")),
            ("verify-finger-not-centered", .retry(message: "Finger not centered; try again.")),
            ("verify-remove-and-retry", .retry(message: "Remove your finger and try again.")),
            ("verify-disconnected", .disconnect),
            ("verify-unknown-error", .error(message: "The fingerprint reader failed.")),
        ]
        for (result, reading) in table {
            let parsed = FprintdReplies.verifyStatus(try message("VerifyStatus", [.string(result), .boolean(true)]).message)
            XCTAssertEqual(parsed?.reading, reading, result)
            XCTAssertEqual(parsed?.done, true, result)
        }
        let hostile: [[DBusArgument]] = [
            [.string("verify-match")],                                  // no done flag
            [.boolean(true), .string("verify-match")],                  // swapped
            [.string("verify-match"), .uint32(1)],                      // done of the wrong type
            [.string("verify-match"), .boolean(true), .string("x")],    // one value too many
            [.string("VERIFY-MATCH"), .boolean(true)],                  // not fprintd's spelling
            [.string("verify-match\u{7f}"), .boolean(true)],
            [.string(String(repeating: "m", count: 5000)), .boolean(true)],
            [.strings(["verify-match"]), .boolean(true)],
            [],
        ]
        for arguments in hostile {
            XCTAssertNil(FprintdReplies.verifyStatus(try message("VerifyStatus", arguments).message), "\(arguments)")
        }
    }

    func test_S43_enrolledFingersKeepOnlyFprintdsFingerNames() throws {
        let odd = ["right-index-finger", "../../etc/passwd", "left-thumb\u{1}", "left-thumb", "left-thumb", "",
                   "right-index-finger ", "évil", String(repeating: "x", count: 5000)]
        // A 5000-byte string makes the whole reply unreadable (bounded reads); without it the rest is filtered.
        XCTAssertNil(FprintdReplies.enrolledFingers(try message("X", [.strings(odd)]).message))
        let parsed = FprintdReplies.enrolledFingers(try message("X", [.strings(Array(odd.dropLast()))]).message)
        XCTAssertEqual(parsed, ["left-thumb", "right-index-finger"])
        XCTAssertEqual(FprintdReplies.enrolledFingers(try message("X", [.strings([])]).message), [])
        // More names than fprintd could ever list: refused, not truncated.
        XCTAssertNil(FprintdReplies.enrolledFingers(try message("X", [.strings(Array(repeating: "left-thumb", count: 65))]).message))
        XCTAssertNil(FprintdReplies.enrolledFingers(try message("X", [.string("left-thumb")]).message))
        XCTAssertNil(FprintdReplies.enrolledFingers(try message("X", [.strings(["left-thumb"]), .string("x")]).message))
    }

    func test_S43_devicePathsRemovalsAndOwnerChangesAreCheckedForShape() throws {
        XCTAssertEqual(FprintdReplies.devicePath(try message("X", [.objectPath("/net/reactivated/Fprint/Device/0")]).message),
                       "/net/reactivated/Fprint/Device/0")
        XCTAssertNil(FprintdReplies.devicePath(try message("X", [.objectPath("/org/evil/Device/0")]).message))
        XCTAssertNil(FprintdReplies.devicePath(try message("X", [.string("/net/reactivated/Fprint/Device/0")]).message))
        XCTAssertNil(FprintdReplies.devicePath(try message("X", []).message))

        XCTAssertEqual(FprintdReplies.removedObject(try message("InterfacesRemoved", [
            .objectPath("/net/reactivated/Fprint/Device/0"), .strings(["net.reactivated.Fprint.Device"]),
        ]).message), "/net/reactivated/Fprint/Device/0")
        XCTAssertNil(FprintdReplies.removedObject(try message("InterfacesRemoved", [.objectPath("/x")]).message))
        XCTAssertNil(FprintdReplies.removedObject(try message("InterfacesRemoved", [.string("/x"), .strings([])]).message))

        let owner = { (values: [DBusArgument]) throws -> Bool? in
            FprintdReplies.fprintdOwnerChanged(try self.message("NameOwnerChanged", values, path: "/org/freedesktop/DBus",
                                                                interface: "org.freedesktop.DBus").message)
        }
        XCTAssertEqual(try owner([.string("net.reactivated.Fprint"), .string(":1.4"), .string("")]), false)
        XCTAssertEqual(try owner([.string("net.reactivated.Fprint"), .string(""), .string(":1.9")]), true)
        XCTAssertNil(try owner([.string("org.example.Other"), .string(""), .string(":1.9")]))
        XCTAssertNil(try owner([.string("net.reactivated.Fprint"), .string("")]))
        XCTAssertNil(try owner([.string("net.reactivated.Fprint"), .boolean(true), .string(":1.9")]))
    }

    func test_S43_theErrorsThatEndAWaitingCheckSayWhyInTheirAnswer() {
        // A check parked for ListEnrolledFingers (EnrollmentParking.swift)
        // answers with the problem its query's error sets; no new reply is
        // parsed on that path (enrolledFingers above reads the answer).
        XCTAssertEqual(FprintdReplies.problem(("org.freedesktop.DBus.Error.Timeout", "")), "fprintd did not answer.")
        XCTAssertEqual(FprintdReplies.problem(("org.freedesktop.DBus.Error.NoReply", "x")), "fprintd did not answer.")
        XCTAssertEqual(FprintdReplies.problem(("org.freedesktop.DBus.Error.ServiceUnknown", "")), "fprintd is not running.")
        XCTAssertEqual(FprintdReplies.problem(("net.reactivated.Fprint.Error.NoSuchDevice", "")), "No fingerprint reader is connected.")
        // fprintd's own message never reaches the client's answer.
        XCTAssertEqual(FprintdReplies.problem(("net.reactivated.Fprint.Error.Internal", "secret\u{7}text")),
                       "The fingerprint reader is not available (net.reactivated.Fprint.Error.Internal).")
    }

    func test_S43_aSignalIsNotAReplyAndHasNoError() throws {
        let signal = try message("VerifyStatus", [.string("verify-match"), .boolean(true)]).message
        XCTAssertNil(signal.error)
        XCTAssertEqual(signal.member, "VerifyStatus")
        XCTAssertEqual(signal.path, "/net/reactivated/Fprint/Device/0")
        // Read twice: every parser rewinds first.
        XCTAssertNotNil(FprintdReplies.verifyStatus(signal))
        XCTAssertNotNil(FprintdReplies.verifyStatus(signal))
        XCTAssertNil(FprintdReplies.readerName(signal))
    }
}
