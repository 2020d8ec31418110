// The default prompt handler on a real pseudo-terminal: the passcode is read
// with echo off (the secret never shows on the terminal), an empty line
// cancels, Enter at a biometric prompt chooses the fallback, and without a
// terminal the handler says it cannot collect a passcode.
import Foundation
import Glibc
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

final class TerminalPromptHandlerTests: XCTestCase {
    /// A pseudo-terminal pair: the handler opens the slave by name, the test
    /// plays the user on the master.
    final class PseudoTerminal {
        let master: Int32
        let slavePath: String
        private var slave: Int32 = -1

        init() throws {
            // posix_openpt and friends need _XOPEN_SOURCE, which the Glibc
            // module does not define: look them up in libc instead.
            typealias Open = @convention(c) (Int32) -> Int32
            typealias Grant = @convention(c) (Int32) -> Int32
            typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
            let libc = dlopen(nil, RTLD_NOW)
            guard let openSymbol = dlsym(libc, "posix_openpt"), let grantSymbol = dlsym(libc, "grantpt"),
                  let unlockSymbol = dlsym(libc, "unlockpt"), let nameSymbol = dlsym(libc, "ptsname") else {
                throw NSError(domain: "pty", code: 0)
            }
            master = unsafeBitCast(openSymbol, to: Open.self)(O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard master >= 0, unsafeBitCast(grantSymbol, to: Grant.self)(master) == 0,
                  unsafeBitCast(unlockSymbol, to: Grant.self)(master) == 0,
                  let name = unsafeBitCast(nameSymbol, to: Name.self)(master) else {
                throw NSError(domain: "pty", code: Int(errno))
            }
            slavePath = String(cString: name)
            // Held open so that reading the master never sees a hang-up
            // before the handler has opened the terminal.
            slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        }

        deinit {
            close(slave)
            close(master)
        }

        func type(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        }

        /// What the handler wrote to the terminal so far (until `marker` shows up).
        func screen(until marker: String, timeout: Double = 10) -> String {
            var text = ""
            let deadline = Date().addingTimeInterval(timeout)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !text.contains(marker), Date() < deadline {
                var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 100) > 0 else { continue }
                let n = read(master, &buffer, buffer.count)
                if n <= 0 { continue }
                text += String(decoding: buffer[0..<n], as: UTF8.self)
            }
            return text
        }

        /// Whatever else arrives within `wait` seconds (a safety net, not timing).
        func drain(wait: Double = 0.3) -> String {
            var text = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            while poll(&descriptor, 1, Int32(wait * 1000)) > 0 {
                let n = read(master, &buffer, buffer.count)
                if n <= 0 { break }
                text += String(decoding: buffer[0..<n], as: UTF8.self)
            }
            return text
        }
    }

    final class RecordingSession: LAPromptSession, @unchecked Sendable {
        let policy: LAPolicy = .deviceOwnerAuthentication
        let localizedReason = "unlock your notes"
        var isActive: Bool { true }
        private let lock = NSLock()
        private var fallbacks = 0
        private var cancels = 0
        var fallbackCount: Int { lock.withLock { fallbacks } }
        func chooseFallback() { lock.withLock { fallbacks += 1 } }
        func cancel() { lock.withLock { cancels += 1 } }
    }

    func testThePasscodeIsReadWithEchoOff() async throws {
        let terminal = try PseudoTerminal()
        let handler = LATerminalPromptHandler(path: terminal.slavePath)
        XCTAssertTrue(handler.canCollectPasscode)
        let session = RecordingSession()
        let prompt = LAPasscodePrompt(localizedReason: "unlock your notes", cancelTitle: "Cancel", attemptsLeft: 6, message: nil)
        async let answer = handler.passcode(for: prompt, session: session)
        let shown = terminal.screen(until: "Passcode")
        XCTAssertTrue(shown.contains("unlock your notes"), shown)
        XCTAssertTrue(shown.contains("6 attempts left"), shown)
        terminal.type("s3cr3t-9\n")
        let secret = await answer
        XCTAssertEqual(secret, "s3cr3t-9")
        XCTAssertFalse((shown + terminal.drain()).contains("s3cr3t-9"), "the passcode was echoed on the terminal")
    }

    func testAnEmptyLineCancels() async throws {
        let terminal = try PseudoTerminal()
        let handler = LATerminalPromptHandler(path: terminal.slavePath)
        let prompt = LAPasscodePrompt(localizedReason: "r", cancelTitle: "Cancel", attemptsLeft: 3, message: "Wrong passcode.")
        async let answer = handler.passcode(for: prompt, session: RecordingSession())
        let shown = terminal.screen(until: "Passcode")
        XCTAssertTrue(shown.contains("Wrong passcode."), shown)
        terminal.type("\n")
        let secret = await answer
        XCTAssertNil(secret, "an empty line is the cancel button")
    }

    func testEnterAtABiometricPromptChoosesTheFallback() throws {
        let terminal = try PseudoTerminal()
        let handler = LATerminalPromptHandler(path: terminal.slavePath)
        let session = RecordingSession()
        let prompt = LABiometricPrompt(attempt: 2, biometryType: .touchID, localizedReason: "unlock your notes",
                                       cancelTitle: "Cancel", fallbackTitle: "Enter Password", message: "Try again.")
        handler.showBiometricPrompt(prompt, session: session)
        let shown = terminal.screen(until: "Enter Password")
        XCTAssertTrue(shown.contains("Touch the sensor (attempt 2)"), shown)
        terminal.type("\n")
        waitUntil(safetyNet: 2) { session.fallbackCount > 0 }
        XCTAssertEqual(session.fallbackCount, 1)
        handler.dismissPrompt(session: session)
    }

    func testWithoutATerminalNoPasscodeCanBeCollected() async {
        let handler = LATerminalPromptHandler(path: "/nonexistent/tty")
        XCTAssertFalse(handler.canCollectPasscode)
        let prompt = LAPasscodePrompt(localizedReason: "r", cancelTitle: "Cancel", attemptsLeft: 6, message: nil)
        let secret = await handler.passcode(for: prompt, session: RecordingSession())
        XCTAssertNil(secret, "no terminal: nothing is read, nothing hangs")
    }
}
