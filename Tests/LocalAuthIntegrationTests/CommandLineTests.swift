// localauthd's command line and configuration file errors (PROTOCOL.md).
import Foundation
import LocalAuthTestSupport
import XCTest

final class CommandLineTests: IntegrationTestCase {
    func testHelpExitsZeroAndMentionsEveryFlag() throws {
        let (code, out, err) = try runToCompletion(try Binary.localauthd(), ["--help"])
        XCTAssertEqual(code, 0, err)
        for flag in ["--config", "--socket", "--state-dir", "--biometry", "--version", "--help"] {
            XCTAssertTrue(out.contains(flag), "--help mentions \(flag):\n\(out)")
        }
    }

    func testVersionExitsZeroAndPrintsTheVersion() throws {
        let (code, out, err) = try runToCompletion(try Binary.localauthd(), ["--version"])
        XCTAssertEqual(code, 0, err)
        XCTAssertTrue(out.hasPrefix("localauthd "), out)
        XCTAssertNotNil(out.range(of: #"\d+\.\d+"#, options: .regularExpression), out)
    }

    func testAnUnknownFlagExitsNonZeroAndPointsToHelp() throws {
        let (code, _, err) = try runToCompletion(try Binary.localauthd(), ["--frobnicate"])
        XCTAssertNotEqual(code, 0)
        XCTAssertTrue(err.contains("--frobnicate"), err)
        XCTAssertTrue(err.contains("--help"), err)
        let (badType, _, typeError) = try runToCompletion(try Binary.localauthd(), ["--biometry", "irisID"])
        XCTAssertNotEqual(badType, 0)
        XCTAssertTrue(typeError.contains("irisID"), typeError)
    }

    func testABadConfigurationFileStopsTheDaemonNamingFileAndLine() throws {
        let cases: [(String, String)] = [
            ("[Daemon]\nMaxConnections=10\nBogusKey=1\n", ":3"),
            ("# comment\n[Nonsense]\n", ":2"),
            ("[Biometry]\nType=irisID\n", ":2"),
            ("[Passcode]\nDelayAfterFailures=many\n", ":2"),
        ]
        for (text, line) in cases {
            let daemon = try DaemonProcess(configuration: text, start: false)
            let (code, _, err) = try runToCompletion(daemon.binary, daemon.arguments)
            XCTAssertNotEqual(code, 0, "\(text.debugDescription) must stop the daemon")
            XCTAssertTrue(err.contains(daemon.configPath + line), "stderr names file and line \(line): \(err)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.socketPath), "it never listened")
        }
    }

    func testAMissingConfigurationFileIsAnError() throws {
        let daemon = try DaemonProcess(start: false)
        try FileManager.default.removeItem(atPath: daemon.configPath)
        let (code, _, err) = try runToCompletion(daemon.binary, daemon.arguments)
        XCTAssertNotEqual(code, 0)
        XCTAssertTrue(err.contains(daemon.configPath), err)
    }

    func testTestConfigPrintsTheEffectiveConfigurationAndExitsZeroWhenValid() throws {
        let daemon = try DaemonProcess(configuration: "[Biometry]\nLockoutThreshold=3\n", start: false)
        let (code, out, err) = try runToCompletion(daemon.binary, ["--test-config", "--config", daemon.configPath,
                                                                   "--socket", "/tmp/elsewhere.sock"])
        XCTAssertEqual(code, 0, err)
        XCTAssertTrue(out.contains("LockoutThreshold=3  # \(daemon.configPath):2"), out)
        XCTAssertTrue(out.contains("Socket=/tmp/elsewhere.sock  # --socket"), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/elsewhere.sock"), "--test-config starts nothing")
    }

    func testTestConfigReportsEveryErrorWithFileAndLineAndExitsOne() throws {
        let daemon = try DaemonProcess(configuration: "[Daemon]\nBogusKey=1\n[Log]\nSegmentSize=tiny\n", start: false)
        let (code, out, err) = try runToCompletion(daemon.binary, ["--test-config", "--config", daemon.configPath])
        XCTAssertEqual(code, 1, out)
        XCTAssertTrue(err.contains(daemon.configPath + ":2: unknown key 'BogusKey'"), err)
        XCTAssertTrue(err.contains(daemon.configPath + ":4: bad value 'tiny'"), err)
        XCTAssertTrue(out.contains("[Daemon]"), "the effective configuration is printed all the same: \(out)")
    }
}
