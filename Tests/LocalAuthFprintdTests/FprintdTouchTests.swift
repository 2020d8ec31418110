// S-60 and S-63 against Debian's real fprintd (virtual device) and
// python3-dbusmock's logind, both on one private bus: the combined prompt
// holds the reader while it scans and gives it back the moment the password
// wins or the biometric half ends; PrepareForSleep ends the scan, releases
// the reader and counts nothing, and after the resume a new prompt claims it
// afresh and matches.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class FprintdTouchTests: XCTestCase {
    let enrolledPrint = "print-root"

    /// fprintd with root's finger, logind on the same bus, a daemon on both, root's passcode 1234.
    func ready(_ extra: String = "") throws -> (FprintdStack, LogindMock, DaemonProcess, Client, String) {
        let stack = try FprintdStack()
        let logind = try LogindMock(bus: stack.bus, directory: stack.directory)
        try stack.enroll("root", finger: "right-index-finger", id: enrolledPrint)
        let daemon = try DaemonProcess(configuration: """
            [Biometry]
            Type=touchID
            Backend=fprintd
            FprintdBus=\(stack.bus)
            LogindBus=\(stack.bus)
            \(extra)

            """)
        let client = try daemon.connect()
        XCTAssertOK(try client.request("p set-passcode secret=1234"))
        let created = try client.request("n new")
        let ctx = try XCTUnwrap(created["ctx"])
        try until("the daemon sees root's finger") {
            try client.request("c can-evaluate ctx=\(ctx) policy=biometrics").status == .ok
        }
        return (stack, logind, daemon, client, ctx)
    }

    func combined(_ client: Client, _ ctx: String, tag: String) throws -> Response {
        try client.send("\(tag) evaluate ctx=\(ctx) policy=owner reason=\"sudo\" prompt=combined")
        return try client.next(tag: tag)
    }

    func test_S60_thePasswordWinsDuringTheScan_andTheReaderIsReleasedAtOnce() throws {
        let (stack, logind, daemon, client, ctx) = try ready()
        defer { withExtendedLifetime((logind, daemon)) {} }
        XCTAssertEqual(try combined(client, ctx, tag: "e")["kind"], "biometric-or-passcode")
        XCTAssertFalse(stack.claimSucceeds("root"), "the daemon holds the reader while the combined prompt scans")
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e")["method"], "passcode")
        try until("the password's success releases the reader") { stack.claimSucceeds("root") }
    }

    func test_S60_aMatchWinsOnTheRealReader() throws {
        let (stack, logind, daemon, client, ctx) = try ready()
        defer { withExtendedLifetime((logind, daemon)) {} }
        XCTAssertEqual(try combined(client, ctx, tag: "e")["kind"], "biometric-or-passcode")
        try stack.device("SCAN \(enrolledPrint)")
        XCTAssertEqual(try client.next(tag: "e")["method"], "biometric")
        try until("the match releases the reader") { stack.claimSucceeds("root") }
    }

    func test_S2_S60_aLockoutEndsTheBiometricHalf_theReaderIsReleasedWhileThePasswordIsAwaited() throws {
        let (stack, logind, daemon, client, ctx) = try ready("LockoutThreshold=1")
        defer { withExtendedLifetime((logind, daemon)) {} }
        XCTAssertEqual(try combined(client, ctx, tag: "e")["kind"], "biometric-or-passcode")
        try stack.device("SCAN print-other")
        let next = try client.next(tag: "e")
        XCTAssertEqual(next["kind"], "passcode", "\(next)")
        XCTAssertEqual(next["message"], "Biometry is locked out.")
        try until("the biometric half's end releases the reader") { stack.claimSucceeds("root") }
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e")["method"], "passcode")
    }

    func test_S63_sleepStopsTheScanAndReleasesTheReader_nothingCounted_afterResumeANewPromptClaimsAndMatches() throws {
        let (stack, logind, daemon, client, ctx) = try ready()
        defer { withExtendedLifetime(daemon) {} }
        XCTAssertEqual(try combined(client, ctx, tag: "e1")["kind"], "biometric-or-passcode")
        XCTAssertFalse(stack.claimSucceeds("root"), "the daemon holds the reader")
        try logind.prepareForSleep(true)
        let end = try client.next(tag: "e1")
        XCTAssertLAError(end, -4, "systemCancel")
        XCTAssertEqual(end["reason"], "suspend")
        XCTAssertEqual(try client.request("s status")["biometric-failures"], "0", "nothing counted")
        // fprintd hears the signal too and suspends its device until the
        // resume: whether the daemon let go of it shows after that.
        try logind.prepareForSleep(false)
        try until("going to sleep released the reader") { stack.claimSucceeds("root") }
        try until("biometry is offered again after the resume") {
            try client.request("c can-evaluate ctx=\(ctx) policy=biometrics").status == .ok
        }
        XCTAssertEqual(try combined(client, ctx, tag: "e2")["kind"], "biometric-or-passcode")
        XCTAssertFalse(stack.claimSucceeds("root"), "the new prompt claimed the reader afresh")
        try stack.device("SCAN \(enrolledPrint)")
        XCTAssertEqual(try client.next(tag: "e2")["method"], "biometric")
    }
}
