// The API as the bus's own tools see it: introspection equal to the shipped
// XML (busctl --xml-interface introspect), `gdbus call`, an ordinary user
// calling, and the shipped policy keeping the name for the daemon's user.
import Foundation
import LocalAuthTestSupport
import XCTest

final class BusToolTests: BusTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let xml = repository.appendingPathComponent("dbus/io.github.localauthd.LocalAuthentication1.xml").path
    static let comparator = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("compare_introspection.py").path

    /// The introspection `xml` has exactly the shipped XML's `interfaces`.
    private func assertShipped(_ xml: String, _ interfaces: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let actual = try bus.directory.write("introspected-\(interfaces[0]).xml", xml)
        let result = try runToCompletion("/usr/bin/python3", [BusToolTests.comparator, BusToolTests.xml, actual] + interfaces)
        XCTAssertEqual(result.0, 0, "the daemon's introspection differs from the shipped XML:\n\(result.1)\(result.2)",
                       file: file, line: line)
    }

    func test_S70_busctlsIntrospectionIsTheShippedXML() throws {
        try startDaemon()
        let root = try bus.busctl(["--xml-interface", "introspect", BusTestCase.service, BusTestCase.root])
        XCTAssertEqual(root.0, 0, root.2)
        try assertShipped(root.1, [BusTestCase.service])
        XCTAssertTrue(root.1.contains("<node name=\"user\"/>"), "the root lists user/self's node")
        let user = try bus.busctl(["--xml-interface", "introspect", BusTestCase.service, BusTestCase.root + "/user/self"])
        XCTAssertEqual(user.0, 0, user.2)
        try assertShipped(user.1, [BusTestCase.environmentInterface])
        // A context and a request are introspected by their owner.
        try admin().ok("set-passcode secret=1234")
        let client = try client()
        let ctx = try XCTUnwrap(try client.values(BusTestCase.root, BusTestCase.service, "CreateContext").first as? String)
        let contextXML = try XCTUnwrap(try client.values(ctx, "org.freedesktop.DBus.Introspectable", "Introspect").first as? String)
        try assertShipped(contextXML, [BusTestCase.contextInterface])
        let request = try XCTUnwrap(try client.values(ctx, BusTestCase.contextInterface, "EvaluatePolicy", "usa{sv}",
                                                      [2, "introspect me", [String: Any]()]).first as? String)
        let requestXML = try XCTUnwrap(try client.values(request, "org.freedesktop.DBus.Introspectable", "Introspect").first as? String)
        try assertShipped(requestXML, [BusTestCase.requestInterface])
    }

    func test_S70_gdbusCallWorksAndAnOrdinaryUserIsAnOrdinaryCaller() throws {
        guard access("/usr/bin/gdbus", X_OK) == 0 else { throw XCTSkip("gdbus (libglib2.0-bin) is not installed") }
        try startDaemon()
        let gdbus = ["call", "--system", "--dest", BusTestCase.service, "--object-path", BusTestCase.root,
                     "--method", BusTestCase.service + ".CanEvaluatePolicy", "1"]
        let asRoot = try runToCompletion("/usr/bin/gdbus", gdbus, environment: bus.environment)
        XCTAssertEqual(asRoot.0, 0, asRoot.2)
        XCTAssertEqual(asRoot.1.trimmingCharacters(in: .whitespacesAndNewlines), "(false, uint32 1, -5, 'passcodeNotSet', @ay [])")
        // uid 65534 through setpriv: the bus says who it is, and that is who the log records.
        let asNobody = try runToCompletion("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                                                "/usr/bin/gdbus"] + gdbus, environment: bus.environment)
        XCTAssertEqual(asNobody.0, 0, asNobody.2)
        XCTAssertEqual(asNobody.1.trimmingCharacters(in: .whitespacesAndNewlines), "(false, uint32 1, -5, 'passcodeNotSet', @ay [])")
        let created = try events().filter { $0["type"] as? String == "context-created" }.compactMap { $0["uid"] as? Int }
        XCTAssertEqual(created, [0, 65534])
        // The policy lets only the daemon's user own the name.
        let own = try runToCompletion("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/busctl",
                                                           "--address=\(bus.address)", "call", "org.freedesktop.DBus",
                                                           "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName", "su",
                                                           BusTestCase.service, "0"])
        XCTAssertNotEqual(own.0, 0)
        XCTAssertTrue(own.2.contains("Access denied") || own.2.contains("AccessDenied"), own.2)
    }

    func test_S70_theEnvironmentsPropertiesAreReadByBusctl() throws {
        try startDaemon()
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let usable = try bus.busctl(["get-property", BusTestCase.service, BusTestCase.root + "/user/self",
                                     BusTestCase.environmentInterface, "BiometryIsUsable"])
        XCTAssertEqual(usable.1.trimmingCharacters(in: .whitespacesAndNewlines), "b true", usable.2)
    }
}
