// The D-Bus API's test bench: a private system bus with the shipped policy
// (PrivateSystemBus), the real daemon serving on it (`[DBus] Bus=`), its
// socket for the administrator's steps (enroll, sensor readings), and bus
// clients that are GDBus in a Python process (bus_driver.py) driven line by
// line, so that the daemon is checked against a D-Bus implementation that
// is not its own. Waits are for observable events only.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

class BusTestCase: XCTestCase {
    static let service = "io.github.localauthd.LocalAuthentication1"
    static let root = "/io/github/localauthd/LocalAuthentication1"
    static let contextInterface = service + ".Context"
    static let requestInterface = service + ".Request"
    static let environmentInterface = service + ".Environment"
    static let errorPrefix = service + ".Error."

    var bus: PrivateSystemBus!
    var daemon: DaemonProcess!
    private var clients: [BusClient] = []
    private var tags = 0

    /// The bus, and the daemon serving on it once it says so.
    func startDaemon(_ extra: String = "", owner: String = "root") throws {
        if bus == nil { bus = try PrivateSystemBus(owner: owner) }
        let configuration = "[Biometry]\nType=touchID\nPromptTimeoutSec=60\n[DBus]\nBus=\(bus.address)\n" + extra
        daemon = try DaemonProcess(configuration: configuration)
        guard waitUntil({ self.daemon.stderr.contains("Serving the D-Bus API") }) else {
            throw HarnessError("the daemon did not serve the bus: \(daemon.stderr.suffix(2000))")
        }
    }

    override func tearDown() {
        for client in clients { client.close() }
        clients.removeAll()
        if let daemon, daemon.isRunning { daemon.stop() }
        daemon = nil
        bus = nil
        super.tearDown()
    }

    /// A new bus client (its own unique name), as the test's uid or another.
    func client(asUID uid: UInt32? = nil) throws -> BusClient {
        let client = try BusClient(bus: bus, uid: uid)
        clients.append(client)
        return client
    }

    /// The administrator on the daemon's socket.
    func admin() throws -> Admin { try Admin(daemon.socketPath) }

    func tag() -> String {
        tags += 1
        return "t\(tags)"
    }

    /// The events of the log, as `localauthctl log -o json` prints them.
    func events() throws -> [[String: Any]] {
        let ctl = try Binary.find("localauthctl")
        let result = try runToCompletion(ctl, ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        guard result.0 == 0 else { throw HarnessError("localauthctl log: \(result.2)") }
        return try result.1.split(separator: "\n").map {
            guard let event = try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] else {
                throw HarnessError("not a JSON object: \($0)")
            }
            return event
        }
    }
}

/// A reply of the bus: the values, or the D-Bus error.
enum BusReply {
    case values([Any])
    case error(name: String, message: String)

    var values: [Any]? { if case .values(let values) = self { return values } else { return nil } }
    var errorName: String? { if case .error(let name, _) = self { return name } else { return nil } }
}

/// One bus connection: bus_driver.py under /usr/bin/python3 (python3-gi
/// imports only there), speaking JSON lines.
final class BusClient {
    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("bus_driver.py").path
    let lines: Client
    let uniqueName: String
    let pid: pid_t
    private var tags = 0

    convenience init(bus: PrivateSystemBus, uid: UInt32? = nil) throws {
        let program = ["/usr/bin/python3", BusClient.driver]
        try self.init(bus: bus, command: uid.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups", "--"] + program }
                      ?? program)
    }

    /// `command` runs bus_driver.py (in a sandbox, as another uid...).
    init(bus: PrivateSystemBus, command: [String]) throws {
        let probe = try runToCompletion("/usr/bin/python3", ["-c", "import gi; gi.require_version('Gio', '2.0'); from gi.repository import Gio"])
        guard probe.0 == 0 else { throw XCTSkip("python3-gi is not installed under /usr/bin/python3: \(probe.2)") }
        lines = try Client(running: command[0], Array(command.dropFirst()), environment: bus.environment,
                           stderrPath: bus.directory.path + "/client.err")
        let ready = try BusClient.parse(try lines.nextLine(tag: "ready"))
        guard case .values(let values) = ready, let name = values.first as? String, let pid = values.last as? Int else {
            throw HarnessError("bus_driver.py did not start: \(ready)")
        }
        uniqueName = name
        self.pid = pid_t(pid)
    }

    func close() { lines.killProgram() }

    /// Sends a call without waiting; its answer comes with `answer(tag)`.
    @discardableResult
    func send(_ path: String, _ interface: String, _ member: String, _ signature: String = "", _ arguments: [Any] = [],
              tag: String? = nil) throws -> String {
        let tag = tag ?? next()
        let request: [String: Any] = ["tag": tag, "call": [path, interface, member, signature, arguments]]
        try lines.send(String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self))
        return tag
    }

    func answer(_ tag: String) throws -> BusReply { try BusClient.parse(try lines.nextLine(tag: tag)) }

    /// A call and its answer.
    func call(_ path: String, _ interface: String, _ member: String, _ signature: String = "", _ arguments: [Any] = []) throws
        -> BusReply {
        try answer(try send(path, interface, member, signature, arguments))
    }

    /// A call that must succeed: its values.
    func values(_ path: String, _ interface: String, _ member: String, _ signature: String = "", _ arguments: [Any] = [],
                file: StaticString = #filePath, line: UInt = #line) throws -> [Any] {
        let reply = try call(path, interface, member, signature, arguments)
        guard let values = reply.values else {
            XCTFail("\(member): \(reply)", file: file, line: line)
            throw HarnessError("\(member) failed: \(reply)")
        }
        return values
    }

    /// A round trip to the daemon: every signal it sent this connection
    /// before answering has arrived once this returns.
    func ping() throws {
        let tag = next()
        try lines.send("{\"tag\": \"\(tag)\", \"ping\": true}")
        _ = try answer(tag)
    }

    /// A round trip to the bus daemon itself (GetId): every message this
    /// connection sent before has been routed once this returns.
    func busRoundTrip() throws {
        let tag = next()
        try lines.send("{\"tag\": \"\(tag)\", \"bus\": true}")
        _ = try answer(tag)
    }

    /// The next signal this connection received: (path, interface, member, args).
    func signal() throws -> (path: String, interface: String, member: String, args: [Any]) {
        let line = try lines.nextLine(tag: "signal")
        let json = line.dropFirst("signal signal ".count)
        guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let path = object["path"] as? String, let interface = object["interface"] as? String,
              let member = object["member"] as? String, let args = object["args"] as? [Any] else {
            throw HarnessError("not a signal: \(line)")
        }
        return (path, interface, member, args)
    }

    /// The next signal of `path` (the daemon's; the bus's own are skipped).
    func signal(of path: String) throws -> (member: String, args: [Any]) {
        while true {
            let signal = try signal()
            if signal.path == path { return (signal.member, signal.args) }
        }
    }

    /// Whether a signal line has arrived (without waiting for one).
    func hasSignal() throws -> Bool {
        _ = try lines.hasLine()
        return lines.pending.contains { $0.hasPrefix("signal ") }
    }

    private func next() -> String {
        tags += 1
        return "c\(tags)"
    }

    static func parse(_ line: String) throws -> BusReply {
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count == 3 else { throw HarnessError("bad driver line \(line)") }
        let value = try JSONSerialization.jsonObject(with: Data(parts[2].utf8), options: [.fragmentsAllowed])
        if parts[1] == "error", let error = value as? [String: Any] {
            return .error(name: error["name"] as? String ?? "", message: error["message"] as? String ?? "")
        }
        return .values(value as? [Any] ?? [])
    }
}

/// Bytes as the driver takes them for "ay".
func bytes(_ text: String) -> [String: String] { ["b": text] }
