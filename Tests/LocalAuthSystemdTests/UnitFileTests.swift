// The units in systemd/: `systemd-analyze verify` is clean (ExecStart
// pointed at the built binary in a temporary copy), the offline security
// exposure is at most 1.0, and the journal catalog documents every
// MESSAGE_ID that DaemonLog sends.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class UnitFileTests: XCTestCase {
    static let maximumExposure = 1.0

    /// Copies the units into a scratch directory, ExecStart= at the built binary.
    func unitCopies() throws -> (TemporaryDirectory, service: String, socket: String) {
        let scratch = TemporaryDirectory()
        let binary = try Binary.localauthd()
        let service = try String(contentsOfFile: Paths.unitDirectory + "/localauthd.service", encoding: .utf8)
        let socket = try String(contentsOfFile: Paths.unitDirectory + "/localauthd.socket", encoding: .utf8)
        let lines = service.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("ExecStart=") ? "ExecStart=\(binary)" : String(line)
        }
        XCTAssertEqual(lines.filter { $0.hasPrefix("ExecStart=") }.count, 1)
        return (scratch, try scratch.write("localauthd.service", lines.joined(separator: "\n")),
                try scratch.write("localauthd.socket", socket))
    }

    func testVerifyIsClean() throws {
        guard let analyze = Paths.tool("systemd-analyze") else { throw XCTSkip("systemd-analyze is not installed") }
        let (scratch, service, socket) = try unitCopies()
        let (code, output) = try runTool(analyze, ["verify", "--man=no", service, socket])
        XCTAssertEqual(code, 0, output)
        XCTAssertEqual(output.trimmingCharacters(in: .whitespacesAndNewlines), "", "verify printed diagnostics")
        _ = scratch
    }

    func testOfflineExposureIsAtMostOne() throws {
        guard let analyze = Paths.tool("systemd-analyze") else { throw XCTSkip("systemd-analyze is not installed") }
        let (scratch, service, _) = try unitCopies()
        let (_, output) = try runTool(analyze, ["security", "--offline=true", "--no-pager", service])
        let exposure = try XCTUnwrap(Self.overallExposure(output), "no exposure line in:\n\(output)")
        XCTAssertLessThanOrEqual(exposure, Self.maximumExposure, output)
        _ = scratch
    }

    /// "→ Overall exposure level for localauthd.service: 0.4 SAFE 😀" -> 0.4
    static func overallExposure(_ output: String) -> Double? {
        for line in output.split(separator: "\n") where line.contains("Overall exposure level for") {
            guard let colon = line.lastIndex(of: ":") else { continue }
            let number = line[line.index(after: colon)...].split(separator: " ").first.map(String.init) ?? ""
            return Double(number)
        }
        return nil
    }

    func testExposureParser() {
        XCTAssertEqual(Self.overallExposure("x\n→ Overall exposure level for localauthd.service: 0.4 SAFE 😀\n"), 0.4)
        XCTAssertEqual(Self.overallExposure("→ Overall exposure level for a.service: 9.6 UNSAFE 😨"), 9.6)
        XCTAssertNil(Self.overallExposure("nothing"))
    }

    func testCatalogCoversEveryMessageID() throws {
        let source = try String(contentsOfFile: Paths.packageRoot + "/Sources/LocalAuthServer/DaemonLog.swift", encoding: .utf8)
        let ids = Self.matches(#"case [a-zA-Z]+ = "([0-9a-f]{32})""#, in: source)
        XCTAssertGreaterThanOrEqual(ids.count, 8, "MessageID cases not found in DaemonLog.swift")
        XCTAssertEqual(Set(ids).count, ids.count, "duplicate MESSAGE_IDs")
        let catalog = try String(contentsOfFile: Paths.unitDirectory + "/localauthd.catalog", encoding: .utf8)
        let documented = Self.matches(#"(?m)^-- ([0-9a-f]{32})$"#, in: catalog)
        XCTAssertEqual(Set(documented), Set(ids))

        // journalctl accepts the file.
        guard let journalctl = Paths.tool("journalctl") else { return }
        let root = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/usr/lib/systemd/catalog", withIntermediateDirectories: true)
        try catalog.write(toFile: root.path + "/usr/lib/systemd/catalog/localauthd.catalog", atomically: true, encoding: .utf8)
        let (updated, updateOutput) = try runTool(journalctl, ["--root=\(root.path)", "--update-catalog"])
        XCTAssertEqual(updated, 0, updateOutput)
        let (listed, list) = try runTool(journalctl, ["--root=\(root.path)", "--list-catalog", "--no-pager"])
        XCTAssertEqual(listed, 0, list)
        for id in ids { XCTAssertTrue(list.contains("\(id) localauthd: "), "\(id) not in:\n\(list)") }
    }

    static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
