// Base of every reliability test. Daemons started through `startDaemon` are
// stopped in tearDown (SIGTERM, exit 0 required unless the test says the
// daemon may be dead), then their state directory, stdout and stderr are
// searched for every secret registered with `Secrets.make` (S-39), and the
// state directory's permissions are checked.
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

class ReliabilityTestCase: XCTestCase {
    private(set) var daemons: [DaemonProcess] = []
    /// Daemons whose stop may be unclean (killed on purpose, disk faults).
    var uncleanStopAllowed: Set<ObjectIdentifier> = []
    /// Daemons whose state directory permissions are not the daemon's doing.
    var skipPermissionCheck: Set<ObjectIdentifier> = []
    private var tagCounter = 0

    static let baseConfiguration = """
        [Daemon]
        IdleLineTimeoutSec=2
        [Biometry]
        Type=touchID
        PromptTimeoutSec=60
        [Passcode]
        [Log]

        """

    func configuration(daemon: [String] = [], biometry: [String] = [], passcode: [String] = [], log: [String] = []) -> String {
        var text = "[Daemon]\n" + daemon.map { $0 + "\n" }.joined()
        text += "[Biometry]\nType=touchID\n" + biometry.map { $0 + "\n" }.joined()
        if !biometry.contains(where: { $0.hasPrefix("PromptTimeoutSec=") }) { text += "PromptTimeoutSec=60\n" }
        text += "[Passcode]\n" + passcode.map { $0 + "\n" }.joined()
        text += "[Log]\n" + log.map { $0 + "\n" }.joined()
        return text
    }

    func startDaemon(configuration: String = ReliabilityTestCase.baseConfiguration, stateDirectory: String? = nil,
                     runAsUID: UInt32? = nil, environment: [String: String] = [:], start: Bool = true) throws -> DaemonProcess {
        let options = DaemonProcess.Options(stateDirectory: stateDirectory, runAsUID: runAsUID, environment: environment,
                                            appendOutput: true, patientProbe: true, safetyNet: 30)
        let daemon = try DaemonProcess(configuration: configuration, options: options, start: start)
        daemons.append(daemon)
        return daemon
    }

    override func tearDown() {
        for daemon in daemons {
            let id = ObjectIdentifier(daemon)
            if daemon.isRunning {
                if uncleanStopAllowed.contains(id) { daemon.signalAndWait(SIGTERM) } else { daemon.stop() }
            }
            let files = Secrets.files(under: daemon.stateDirectory) + [daemon.stderrPath, daemon.stdoutPath]
            let leaks = Secrets.leaks(in: files)
            XCTAssertTrue(leaks.isEmpty, "secrets found on disk or in output (S-39): \(leaks)")
            if !skipPermissionCheck.contains(id) {
                let problems = permissionProblems(stateDirectory: daemon.stateDirectory)
                XCTAssertTrue(problems.isEmpty, "state directory permissions: \(problems)")
            }
        }
        daemons.removeAll()
        super.tearDown()
    }

    func tag(_ prefix: String = "t") -> String {
        tagCounter += 1
        return "\(prefix)\(tagCounter)"
    }

    func newContext(_ client: Client, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let reply = try client.request("\(tag("n")) new")
        XCTAssertOK(reply, file: file, line: line)
        guard let ctx = reply["ctx"] else { throw HarnessError("new without ctx: \(reply)") }
        return ctx
    }

    /// Admin: sets uid's passcode and enrolls one template.
    func prepareUser(_ admin: Client, uid: UInt32, passcode: String, enroll: Bool = true,
                     file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertOK(try admin.request("\(tag("p")) set-passcode secret=\(passcode) uid=\(uid)"), file: file, line: line)
        if enroll { XCTAssertOK(try admin.request("\(tag("en")) enroll uid=\(uid)"), file: file, line: line) }
    }

    /// A tmpfs of `size` mounted at `mnt` in a fresh temp dir (unmounted with
    /// it); skips the test where mounting is not allowed.
    func tinyFilesystem(_ size: String) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        let mountPoint = directory.path + "/mnt"
        mkdir(mountPoint, 0o755)
        let (code, _, err) = try runToCompletion("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0755", "tmpfs", mountPoint])
        guard code == 0 else { throw XCTSkip("cannot mount a tmpfs here (needs root): \(err)") }
        directory.mounts.append(mountPoint)
        return directory
    }

    func status(_ admin: Client, uid: UInt32) throws -> Response {
        let reply = try admin.request("\(tag("st")) status uid=\(uid)")
        guard reply.status == .ok else { throw HarnessError("status uid=\(uid): \(reply)") }
        return reply
    }
}

