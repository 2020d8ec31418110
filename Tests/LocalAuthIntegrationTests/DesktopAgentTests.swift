// The desktop agent (localauth-agent, GTK 4) under Xvfb (S-65..S-69): started
// in a logind session of dbusmock's, it registers, and an app's evaluation in
// that session opens its dialog with the app's name, program and reason; a
// simulated finger match closes it with success, a password typed with
// xdotool succeeds, a Flatpak app is named by its id's .desktop file,
// Cancel (from the keyboard: its mnemonic) and Escape give
// userCancel, the app's fallback title is a button after a miss (userFallback), and the fingerprint line follows the sensor (Try again, then
// Locked out: use your password); the app's words are shown escaped (a line
// feed, a bidi override: S-69). A screenshot of the dialog is
// kept (LOCALAUTH_ARTIFACTS, else /tmp/localauthd-artifacts), and the
// agent's memory holds no password afterwards. The dialog's texts are read
// from its LOCALAUTH_AGENT_TRACE lines (an X screen has none to read back).
// Skips without root, Xvfb, xdotool, imagemagick, dbusmock or a built agent
// (make -C Sources/localauth-agent).
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class DesktopAgentTests: XCTestCase {
    static let password = "Desktop-Agent-Password-Typed-Into-The-Dialog-And-Wiped"
    var xvfb: pid_t = 0
    var display = ""
    var mock: LogindMock!
    var daemon: DaemonProcess!
    var agentPID: pid_t = 0
    var agentOutput = ""

    static var agentBinary: String {
        if let path = ProcessInfo.processInfo.environment["LOCALAUTH_AGENT_BINARY"], !path.isEmpty { return path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/localauth-agent/localauth-agent").path
    }

    override func setUpWithError() throws {
        guard getuid() == 0 else { throw XCTSkip("the agent runs as root, the test's session's user") }
        for tool in ["/usr/bin/Xvfb", "/usr/bin/xdotool", "/usr/bin/import", Self.agentBinary] where access(tool, X_OK) != 0 {
            throw XCTSkip("\(tool) is missing (scripts/install-deps; make -C Sources/localauth-agent)")
        }
        mock = try LogindMock()
        try mock.addSession("c9", uid: 0, user: "root", pid: getpid())
        // Xvfb picks a free display and writes its number on stdout.
        let displayFile = mock.directory.path + "/display"
        xvfb = try spawn("/usr/bin/Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "800x600x24"],
                         stdoutPath: displayFile, stderrPath: mock.directory.path + "/xvfb.log")
        XCTAssertTrue(waitUntil { readText(displayFile).hasSuffix("\n") }, "Xvfb did not start: \(readText(mock.directory.path + "/xvfb.log"))")
        display = ":" + readText(displayFile).trimmingCharacters(in: .whitespacesAndNewlines)
        // Two failed readings lock biometry out (S-1), within one evaluation.
        daemon = try DaemonProcess(configuration: DaemonProcess.defaultConfiguration + "LogindBus=\(mock.bus)\nLockoutThreshold=2\n")
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("p set-passcode secret=\"\(Self.password)\""))
        XCTAssertOK(try admin.request("e enroll uid=0"))
        // An installed app, for the dialog to name: its .desktop file's Exec
        // is the probe's program (S-67: matched on the file the process runs).
        let applications = mock.directory.path + "/share/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        let entry = ["[Desktop Entry]", "Type=Application", "Name=Secure Notes",
                     "Exec=\(try Binary.find("localauth-app-probe")) %U", "Icon=accessories-text-editor", ""]
        try entry.joined(separator: "\n").write(toFile: applications + "/localauth-test-notes.desktop", atomically: true,
                                                encoding: .utf8)
        // A Flatpak app's: its id names the file.
        let flatpakEntry = ["[Desktop Entry]", "Type=Application", "Name=Sandboxed Notes",
                            // Exec is a program found in PATH, or GLib skips the file (flatpak run, where installed).
                            "Exec=env FLATPAK_ID=org.example.SandboxedNotes notes", "Icon=accessories-text-editor", ""]
        try flatpakEntry.joined(separator: "\n").write(toFile: applications + "/org.example.SandboxedNotes.desktop", atomically: true,
                                                       encoding: .utf8)
        // The agent, held until its pid is in session c9.
        agentOutput = mock.directory.path + "/agent.out"
        let go = Pipe()
        agentPID = try spawn("/bin/sh", ["-c", "read go; exec \"$0\"", Self.agentBinary], stdinFD: go.fileHandleForReading.fileDescriptor,
                             stdoutPath: agentOutput, stderrPath: mock.directory.path + "/agent.err",
                             environment: ["DISPLAY": display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "NO_AT_BRIDGE": "1",
                                           "LOCALAUTHD_SOCKET": daemon.socketPath, "LOCALAUTH_AGENT_TRACE": "1",
                                           "LANGUAGE": "C", "LC_ALL": "C.UTF-8",
                                           "XDG_DATA_DIRS": mock.directory.path + "/share:/usr/share"])
        try mock.mapPID(agentPID, to: "c9")
        try go.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
        XCTAssertTrue(waitUntil { readText(agentOutput).contains("the authentication agent of session c9") },
                      "the agent did not register: \(readText(mock.directory.path + "/agent.err"))")
    }

    override func tearDown() {
        if agentPID > 0 {
            kill(agentPID, SIGTERM)
            _ = waitForExit(agentPID, timeout: 10)
        }
        if let daemon { _ = daemon.stop() }
        if xvfb > 0 {
            kill(xvfb, SIGTERM)
            _ = waitForExit(xvfb, timeout: 10)
        }
        daemon = nil
        mock = nil
        super.tearDown()
    }

    func xdotool(_ arguments: [String]) throws -> String {
        try runToCompletion("/usr/bin/xdotool", arguments, timeout: 20, environment: ["DISPLAY": display]).1
    }

    /// The dialog's window, once it is shown.
    func dialogWindow() throws -> String {
        var window = ""
        XCTAssertTrue(try waitUntil {
            window = try xdotool(["search", "--onlyvisible", "--name", "Authentication Required"])
                .split(separator: "\n").first.map(String.init) ?? ""
            return !window.isEmpty
        }, "no dialog: \(readText(agentOutput))")
        return window
    }

    /// The last line the dialog traced.
    func shown() -> String { readText(agentOutput).split(separator: "\n").last { $0.hasPrefix("dialog ") }.map(String.init) ?? "" }

    /// An app's evaluation, in session c9, that asked for the agent.
    func evaluate(_ policy: String, reason: String, cancelTitle: String? = "Not now") throws -> Client {
        let app = try daemon.connect()
        let ctx = try XCTUnwrap(try app.request("n new")["ctx"])
        XCTAssertOK(try app.request("s set ctx=\(ctx) prompt=agent" + (cancelTitle.map { " cancel-title=\"\($0)\"" } ?? "")))
        try app.send("e evaluate ctx=\(ctx) policy=\(policy) reason=\"\(reason)\"")
        XCTAssertEqual(try app.nextLine(tag: "e"), "e PROMPT kind=agent")
        return app
    }

    func test_S66_S67_theDialogShowsTheAppAndItsReason_andAFingerMatchClosesItWithSuccess() throws {
        let app = try evaluate("biometrics", reason: "Unlock the test vault")
        let window = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains("program=") && !shown().contains("program=\"\"") }, shown())
        let line = shown()
        XCTAssertTrue(line.contains("reason=\"Unlock the test vault\""), line)
        XCTAssertTrue(line.contains("state=\"Touch the sensor\""), line)
        XCTAssertTrue(line.contains("password=hidden"), line)
        XCTAssertTrue(line.contains("cancel=\"Not now\""), "the app's title: \(line)")
        // Who asks: this test process, as the kernel names it.
        let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        XCTAssertTrue(line.contains("program=\"\(program)"), "\(line) lacks \(program)")
        XCTAssertTrue(line.contains(#"icon="application-x-executable""#), "a program no .desktop file names: \(line)")
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("f sensor uid=0 result=match"))
        XCTAssertEqual(try app.next(tag: "e")["method"], "biometric")
        XCTAssertTrue(try waitUntil { try xdotool(["search", "--onlyvisible", "--name", "Authentication Required"]).isEmpty },
                      "the dialog stayed after the match (window \(window))")
    }

    func test_S66_S68_aPasswordTypedIntoTheDialogSucceeds_andTheAgentKeepsNoCopy() throws {
        let app = try evaluate("owner", reason: "Sign the release")
        let window = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains("password=shown") && shown().contains("program=\"/") }, shown())
        XCTAssertTrue(shown().contains("state=\"Touch the sensor\""), "touch or type: \(shown())")
        try keepScreenshot(named: "localauth-agent-dialog.png")
        _ = try xdotool(["windowfocus", "--sync", window])
        _ = try xdotool(["type", "--delay", "20", Self.password])
        _ = try xdotool(["key", "Return"])
        XCTAssertEqual(try app.next(tag: "e")["method"], "passcode", readText(agentOutput))
        XCTAssertTrue(try waitUntil { try xdotool(["search", "--onlyvisible", "--name", "Authentication Required"]).isEmpty })
        // The dialog is gone, its buffer freed: no copy of the password in the agent.
        var copies = 0
        try ProcessMemory.forEachWritableMapping(of: String(agentPID)) { bytes in
            if TerminalAgentTests.contains(bytes, String(Self.password.dropFirst(16))) { copies += 1 }
        }
        XCTAssertEqual(copies, 0, "copies of the password in the agent's memory")
    }

    func test_S29_escapeInTheDialogIsUserCancel() throws {
        // S-69: a reason that tries to add a line and reverse the text is shown escaped.
        let app = try evaluate("owner", reason: "Delete the backups\\nSystem Update \u{202E}gpj.exe")
        let window = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains("reason=") }, shown())
        XCTAssertTrue(shown().contains(#"reason="Delete the backups\\u000aSystem Update \\u202egpj.exe""#), shown())
        _ = try xdotool(["windowfocus", "--sync", window])
        _ = try xdotool(["key", "Escape"])
        let end = try app.next(tag: "e")
        XCTAssertEqual(end.errorName, "userCancel")
        XCTAssertTrue(try waitUntil { try xdotool(["search", "--onlyvisible", "--name", "Authentication Required"]).isEmpty })
    }

    func test_S29_theCancelButtonIsUserCancel_andTheKeyboardReachesIt() throws {
        let app = try evaluate("owner", reason: "Rotate the keys", cancelTitle: nil)
        let window = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains("password=shown") }, shown())
        XCTAssertTrue(shown().contains("cancel=\"_Cancel\""), "GTK's mnemonic on the default title: \(shown())")
        // Alt+C, the button's mnemonic, from the password field that has the focus.
        _ = try xdotool(["windowfocus", "--sync", window])
        _ = try xdotool(["key", "alt+c"])
        XCTAssertEqual(try app.next(tag: "e").errorName, "userCancel", readText(agentOutput))
        XCTAssertTrue(try waitUntil { try xdotool(["search", "--onlyvisible", "--name", "Authentication Required"]).isEmpty })
    }

    func test_S27_theAppsFallbackTitleIsAButtonAfterAMiss_andChoosingItIsUserFallback() throws {
        let app = try daemon.connect()
        let ctx = try XCTUnwrap(try app.request("n new")["ctx"])
        XCTAssertOK(try app.request("s set ctx=\(ctx) prompt=agent fallback-title=\"Use Master Password\""))
        try app.send("e evaluate ctx=\(ctx) policy=biometrics reason=\"Open the vault\"")
        XCTAssertEqual(try app.nextLine(tag: "e"), "e PROMPT kind=agent")
        let window = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains("state=\"Touch the sensor\"") }, shown())
        XCTAssertTrue(shown().hasSuffix(" fallback=-"), "no fallback on the first prompt (S-27): \(shown())")
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("f sensor uid=0 result=nomatch"))
        XCTAssertTrue(waitUntil { shown().hasSuffix(" fallback=Use Master Password") }, "after a miss: \(shown())")
        XCTAssertTrue(shown().contains("password=hidden"), "policy 1 takes no password: \(shown())")
        // The keyboard: the fallback button has the focus; space presses it.
        _ = try xdotool(["windowfocus", "--sync", window])
        _ = try xdotool(["key", "space"])
        let end = try app.next(tag: "e")
        XCTAssertEqual(end.errorName, "userFallback", readText(agentOutput))
        XCTAssertTrue(try waitUntil { try xdotool(["search", "--onlyvisible", "--name", "Authentication Required"]).isEmpty })
    }

    func test_S27_S60_theFingerprintLineSaysTryAgain_thenLockedOutUseYourPassword() throws {
        let app = try evaluate("owner", reason: "Open the safe")
        _ = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains("state=\"Touch the sensor\"") && shown().contains("password=shown") }, shown())
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("f sensor uid=0 result=nomatch"))
        XCTAssertTrue(waitUntil { shown().contains("state=\"Try again\"") }, "after a no match: \(shown())")
        XCTAssertTrue(shown().contains("password=shown"), "the password is still on offer: \(shown())")
        // The second no match locks biometry out (LockoutThreshold=2): the password alone.
        XCTAssertOK(try admin.request("g sensor uid=0 result=nomatch"))
        XCTAssertTrue(waitUntil { shown().contains("state=\"Locked out: use your password\"") }, "after the lockout: \(shown())")
        XCTAssertTrue(shown().contains("password=shown"), shown())
        try keepScreenshot(named: "localauth-agent-locked-out.png")
        _ = try xdotool(["windowfocus", "--sync", try dialogWindow()])
        _ = try xdotool(["type", "--delay", "20", Self.password])
        _ = try xdotool(["key", "Return"])
        XCTAssertEqual(try app.next(tag: "e")["method"], "passcode", readText(agentOutput))
    }

    func test_S67_anInstalledAppIsNamedAndShownByItsDesktopFile() throws {
        // The app: a plain LAContext (localauth-app-probe), in session c9.
        let app = try AppProbe(socket: daemon.socketPath, policy: "owner", reason: #"Open the note "Tax 2026""#)
        try mock.mapPID(app.pid, to: "c9")
        try app.go()
        let window = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains(#"name="Secure Notes wants you to authenticate""#) }, shown())
        let line = shown()
        XCTAssertTrue(line.contains("program=\"\(try Binary.find("localauth-app-probe"))\""), line)
        XCTAssertTrue(line.contains(#"icon="accessories-text-editor""#), "the icon of its .desktop file: \(line)")
        XCTAssertTrue(line.contains(#"reason="Open the note \"Tax 2026\"""#), line)
        XCTAssertTrue(line.contains("password=shown"), line)
        // The picture the README shows (docs/images), kept by CI too.
        try keepScreenshot(named: "localauth-agent-installed-app.png")
        _ = try xdotool(["windowfocus", "--sync", window])
        _ = try xdotool(["key", "Escape"])
        XCTAssertEqual(try app.line(), "ERR userCancel -2")
        app.finish()
    }

    func test_S67_aFlatpakAppIsNamedByItsIdsDesktopFile_besideItsProgramAndId() throws {
        for tool in ["/usr/bin/unshare", "/usr/sbin/chroot", "/usr/bin/python3"] where access(tool, X_OK) != 0 {
            throw XCTSkip("\(tool) is missing")
        }
        // The app: python3 in a sandbox as Flatpak makes one, seen from
        // outside: its own mount namespace and root, /.flatpak-info in it.
        let root = mock.directory.path + "/sandbox"
        mkdir(root, 0o755)
        for directory in ["usr", "etc", "dev", "proc", "tmp"] { mkdir(root + "/" + directory, 0o755) }
        for link in ["bin", "lib", "lib64", "sbin"] {
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/" + link) { symlink(target, root + "/" + link) }
        }
        try "[Application]\nname=org.example.SandboxedNotes\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\n"
            .write(toFile: root + "/.flatpak-info", atomically: true, encoding: .utf8)
        let app = """
            import socket, sys
            sys.stdin.readline()
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
            def send(line): f.write(line + "\\n"); f.flush()
            send("n new"); ctx = f.readline().split("ctx=")[1].strip()
            send("s set ctx=%s prompt=agent" % ctx); f.readline()
            send('e evaluate ctx=%s policy=owner reason="Open the sandboxed notes"' % ctx)
            for line in f:
                print(line.strip(), flush=True)
                if line.startswith(("e OK", "e ERR")): break
            """
        try app.write(toFile: root + "/app.py", atomically: true, encoding: .utf8)
        let script = ["usr", "etc", "dev", "proc", "tmp"].map { "mount --rbind /\($0) \(root)/\($0)" }.joined(separator: " && ")
            + " && exec chroot \(root) /usr/bin/python3 /app.py \(daemon.socketPath)"
        let sandboxed = try Client(running: "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", script],
                                   stderrPath: mock.directory.path + "/sandboxed.err")
        defer { sandboxed.killProgram() }
        // unshare, sh and chroot exec: the pid is python3's, in session c9.
        try mock.mapPID(try XCTUnwrap(sandboxed.programPID), to: "c9")
        try sandboxed.send("go")
        XCTAssertEqual(try sandboxed.nextLine(), "e PROMPT kind=agent", readText(mock.directory.path + "/sandboxed.err"))
        let window = try dialogWindow()
        XCTAssertTrue(waitUntil { shown().contains(#"name="Sandboxed Notes wants you to authenticate""#) }, shown())
        // Its program as the sandbox names it, never taken for the host's file.
        XCTAssertTrue(shown().contains("(Flatpak org.example.SandboxedNotes)\""), shown())
        XCTAssertTrue(shown().contains(#"icon="accessories-text-editor""#), "the icon of its id's .desktop file: \(shown())")
        XCTAssertTrue(shown().contains(#"reason="Open the sandboxed notes""#), shown())
        try keepScreenshot(named: "localauth-agent-flatpak-app.png")
        _ = try xdotool(["windowfocus", "--sync", window])
        _ = try xdotool(["key", "Escape"])
        XCTAssertEqual(try sandboxed.nextLine()?.contains("name=userCancel"), true)
    }

    /// The whole screen, kept where the CI log says.
    func keepScreenshot(named name: String) throws {
        let directory = ProcessInfo.processInfo.environment["LOCALAUTH_ARTIFACTS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "/tmp/localauthd-artifacts"
        _ = mkdir(directory, 0o755)
        let path = directory + "/" + name
        let result = try runToCompletion("/usr/bin/import", ["-window", "root", path], timeout: 30, environment: ["DISPLAY": display])
        XCTAssertEqual(result.0, 0, result.2)
        print("screenshot of the dialog: \(path)")
    }
}
