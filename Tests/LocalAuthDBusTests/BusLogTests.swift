// S-73 and S-70's "same events": what the log records of a bus caller (the
// transport, its unique name, a Flatpak app id read as hostile input), and
// that one scenario through the socket and through the bus records the
// same events apart from those fields.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class BusLogTests: BusTestCase {
    private func created(_ ctx: String) throws -> [String: Any] {
        let id = String(ctx.split(separator: "/").last ?? "")
        return try XCTUnwrap(try events().first { $0["type"] as? String == "context-created" && $0["ctx"] as? String == id })
    }

    func test_S73_contextCreatedRecordsTheTransportAndTheCallersBusName() throws {
        try startDaemon()
        let client = try client()
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        let event = try created(ctx)
        XCTAssertEqual(event["transport"] as? String, "dbus")
        XCTAssertEqual(event["bus_name"] as? String, client.uniqueName)
        XCTAssertEqual(event["pid"] as? Int, Int(client.pid), "the pid the bus reports, the caller's")
        XCTAssertEqual(event["uid"] as? Int, 0)
        XCTAssertNil(event["app"], "not in a sandbox")
        // A socket context has none of the three.
        let socket = try daemon.connect()
        let reply = try socket.request("s1 new")
        let plain = try created("/" + (reply["ctx"] ?? ""))
        XCTAssertNil(plain["transport"])
        XCTAssertNil(plain["bus_name"])
    }

    /// A bus client whose root directory holds `.flatpak-info` as `setUp`
    /// makes it: a private mount namespace and a chroot with the system's
    /// directories bound in, as a sandbox looks from outside.
    private func sandboxed(_ name: String, setUp: (String) throws -> Void) throws -> BusClient {
        for tool in ["/usr/bin/unshare", "/usr/sbin/chroot"] where access(tool, X_OK) != 0 { throw XCTSkip("\(tool) is missing") }
        let root = bus.directory.path + "/" + name
        mkdir(root, 0o755)
        for directory in ["usr", "etc", "dev", "proc", "tmp"] { mkdir(root + "/" + directory, 0o755) }
        for link in ["bin", "lib", "lib64", "sbin"] where isSymlink("/" + link) { symlink("usr/" + link, root + "/" + link) }
        try setUp(root)
        let driver = root + "/driver.py"
        try String(contentsOfFile: BusClient.driver, encoding: .utf8).write(toFile: driver, atomically: true, encoding: .utf8)
        let script = ["usr", "etc", "dev", "proc", "tmp"].map { "mount --rbind /\($0) \(root)/\($0)" }.joined(separator: " && ")
            + " && exec chroot \(root) /usr/bin/python3 /driver.py"
        let client = try BusClient(bus: bus, command: ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script])
        clientsToClose.append(client)
        return client
    }
    private var clientsToClose: [BusClient] = []

    override func tearDown() {
        for client in clientsToClose { client.close() }
        clientsToClose.removeAll()
        super.tearDown()
    }

    func test_S73_aFlatpakSandboxsAppIdIsRecordedAndAHostileOneIsNot() throws {
        try startDaemon()
        let info = "[Application]\nname=org.example.Notes\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\n\n[Instance]\ninstance-id=42\n"
        let flatpak = try sandboxed("flatpak") { root in try info.write(toFile: root + "/.flatpak-info", atomically: true, encoding: .utf8) }
        let ctx = try XCTUnwrap(try flatpak.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        XCTAssertEqual(try created(ctx)["app"] as? String, "org.example.Notes")

        // Hostile sandboxes: a symlink out (not followed), a name that is no
        // application id, a file too large to be one: no app, and served.
        let hostile: [(String, (String) throws -> Void)] = [
            ("symlink", { root in
                try "[Application]\nname=org.example.Elsewhere\n".write(toFile: root + "/real", atomically: true, encoding: .utf8)
                symlink("/real", root + "/.flatpak-info")
            }),
            ("badname", { root in
                try "[Application]\nname=../../etc/shadow\n".write(toFile: root + "/.flatpak-info", atomically: true, encoding: .utf8)
            }),
            ("huge", { root in
                try ("[Application]\nname=org.example.Huge\n" + String(repeating: "#", count: 70_000) + "\n")
                    .write(toFile: root + "/.flatpak-info", atomically: true, encoding: .utf8)
            }),
            ("directory", { root in mkdir(root + "/.flatpak-info", 0o755) }),
        ]
        for (name, setUp) in hostile {
            let client = try sandboxed(name, setUp: setUp)
            let context = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String, name)
            let event = try created(context)
            XCTAssertEqual(event["transport"] as? String, "dbus", name)
            XCTAssertNil(event["app"], "\(name): \(event)")
        }
    }

    // MARK: - The same scenario through both transports

    /// Misses, the evaluation's attempts, a lockout and the passcode: the
    /// events recorded, without the fields that name a transport or a run.
    func test_S70_theSameScenarioThroughTheSocketAndTheBusRecordsTheSameEvents() throws {
        try startDaemon()
        let viaBus = try scenario(BusScenario(self))
        let busDaemon = daemon!
        daemon = try DaemonProcess(configuration: "[Biometry]\nType=touchID\nPromptTimeoutSec=60\n[DBus]\nServe=no\n")
        let viaSocket = try scenario(SocketScenario(try daemon.connect()))
        XCTAssertEqual(viaBus.count, viaSocket.count, "\(viaBus)\n---\n\(viaSocket)")
        for (bus, socket) in zip(viaBus, viaSocket) { XCTAssertEqual(bus, socket) }
        XCTAssertTrue(viaBus.contains { $0.contains("\"type\":\"evaluation-failed\"") && $0.contains("biometryLockout") })
        busDaemon.stop()
    }

    private func scenario(_ client: ScenarioClient) throws -> [String] {
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        // Policy 2: three misses end the biometric phase, a wrong passcode, the right one.
        var ctx = try client.context()
        try client.evaluate(ctx, policy: 2)
        for _ in 0..<3 {
            XCTAssertEqual(try client.prompt(), "biometric")
            try admin.ok("sensor uid=0 result=nomatch")
        }
        XCTAssertEqual(try client.prompt(), "passcode")
        try client.passcode(ctx, "9999")
        XCTAssertEqual(try client.prompt(), "passcode")
        try client.passcode(ctx, "1234")
        XCTAssertEqual(try client.final(), "passcode")
        // Policy 1: three misses (the evaluation's attempts), then two more: the lockout.
        ctx = try client.context()
        try client.evaluate(ctx, policy: 1)
        for _ in 0..<3 {
            XCTAssertEqual(try client.prompt(), "biometric")
            try admin.ok("sensor uid=0 result=nomatch")
        }
        XCTAssertEqual(try client.final(), "authenticationFailed")
        try client.evaluate(ctx, policy: 1)
        for _ in 0..<2 {
            XCTAssertEqual(try client.prompt(), "biometric")
            try admin.ok("sensor uid=0 result=nomatch")
        }
        XCTAssertEqual(try client.final(), "biometryLockout")
        XCTAssertEqual(try client.check(ctx, policy: 1), "biometryLockout")
        // Policy 2 goes straight to the passcode, which lifts the lockout.
        try client.evaluate(ctx, policy: 2)
        XCTAssertEqual(try client.prompt(), "passcode")
        try client.passcode(ctx, "1234")
        XCTAssertEqual(try client.final(), "passcode")
        return try events().compactMap { event in
            guard let type = event["type"] as? String, !["daemon-started", "daemon-stopped"].contains(type) else { return nil }
            let kept = event.filter { !["seq", "time", "ctx", "pid", "transport", "bus_name", "app"].contains($0.key) }
            return String(decoding: try JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys]), as: UTF8.self)
        }
    }
}

private func isSymlink(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
}

/// One client of the scenario, through either transport.
protocol ScenarioClient {
    func context() throws -> String
    func evaluate(_ ctx: String, policy: Int) throws
    /// The next prompt's kind.
    func prompt() throws -> String
    /// The final answer: the method, or the LAError's name.
    func final() throws -> String
    func passcode(_ ctx: String, _ secret: String) throws
    func check(_ ctx: String, policy: Int) throws -> String
}

final class SocketScenario: ScenarioClient {
    let client: Client
    private var tags = 0
    private var evaluation = ""

    init(_ client: Client) { self.client = client }

    private func tag() -> String {
        tags += 1
        return "s\(tags)"
    }

    func context() throws -> String { try XCTUnwrap(try client.request("\(tag()) new")["ctx"]) }

    func evaluate(_ ctx: String, policy: Int) throws {
        evaluation = tag()
        try client.send("\(evaluation) evaluate ctx=\(ctx) policy=\(policy) reason=scenario")
    }

    func prompt() throws -> String {
        let line = try client.next(tag: evaluation)
        guard line.status == .prompt else { throw HarnessError("expected a prompt: \(line)") }
        return line["kind"] ?? ""
    }

    func final() throws -> String {
        let line = try client.next(tag: evaluation)
        return line.status == .ok ? line["method"] ?? "" : line["name"] ?? ""
    }

    func passcode(_ ctx: String, _ secret: String) throws {
        XCTAssertOK(try client.request("\(tag()) passcode ctx=\(ctx) secret=\(secret)"))
    }

    func check(_ ctx: String, policy: Int) throws -> String {
        let reply = try client.request("\(tag()) can-evaluate ctx=\(ctx) policy=\(policy)")
        return reply.status == .ok ? "ok" : reply["name"] ?? ""
    }
}

final class BusScenario: ScenarioClient {
    let client: BusClient
    private var request = ""

    init(_ test: BusTestCase) throws { client = try test.client() }

    func context() throws -> String {
        try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
    }

    func evaluate(_ ctx: String, policy: Int) throws {
        request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                  [policy, "scenario", [String: Any]()]).first as? String)
    }

    func prompt() throws -> String {
        let signal = try client.signal(of: request)
        guard signal.member == "Prompt" else { throw HarnessError("expected a prompt: \(signal)") }
        return signal.args[0] as? String ?? ""
    }

    func final() throws -> String {
        let signal = try client.signal(of: request)
        guard signal.member == "Completed" else { throw HarnessError("expected Completed: \(signal)") }
        return (signal.args[0] as? Bool == true ? signal.args[1] : signal.args[3]) as? String ?? ""
    }

    func passcode(_ ctx: String, _ secret: String) throws {
        XCTAssertNotNil(try client.call(request, BusTestCase.requestInterface, "Passcode", "ay", [bytes(secret)]).values)
    }

    func check(_ ctx: String, policy: Int) throws -> String {
        let values = try client.values(ctx, BusTestCase.contextInterface, "CanEvaluatePolicy", "u", [policy])
        return values[0] as? Bool == true ? "ok" : values[3] as? String ?? ""
    }
}
