// The configuration files: defaults, PROTOCOL.md's sample, the order of
// files, and an error naming the file and line for every kind of mistake.

import LocalAuthCore
import XCTest
@testable import LocalAuthConfig
import LocalAuthTestSupport

final class ConfigurationParserTests: XCTestCase {
    /// Copied verbatim from PROTOCOL.md ("The daemon's command line and configuration").
    let protocolSample = """
        [Daemon]
        Socket=/run/localauthd/socket
        StateDirectory=/var/lib/localauthd
        AdminGroup=
        MaxConnections=4096
        MaxConnectionsPerUser=256
        MaxContextsPerConnection=64
        MaxPendingBytes=1M
        IdleLineTimeoutSec=10      # a started line must be finished within this time

        [Biometry]
        Type=touchID               # none | touchID | faceID | opticID
        Backend=simulated          # simulated: readings come from the admin `sensor` verb
        AttemptsPerEvaluation=     # empty = 3 for touchID, 2 for faceID and opticID
        LockoutThreshold=5
        PromptTimeoutSec=60
        PasscodeRequiredAfterSec=0
        PasscodeRequiredAfterBoot=no

        [Passcode]
        Backend=builtin            # yescrypt hashes in the state directory
        DelayAfterFailures=6
        BackoffSec=60 300 900 3600
        MaxPasscodeFailures=0

        [Log]
        SegmentSize=64M
        SnapshotEvery=100000       # events between snapshots
        """

    func parse(_ files: (String, String)...) throws(ConfigurationError) -> DaemonConfiguration {
        try ConfigurationParser.parse(files.map { (fileName: $0.0, contents: $0.1) })
    }

    /// Parses one file that must fail; returns the error's text.
    func failure(_ contents: String, file: StaticString = #filePath, line: UInt = #line) -> ConfigurationError? {
        do {
            _ = try parse(("/etc/localauthd/localauthd.conf", contents))
            XCTFail("parsed: \(contents)", file: file, line: line)
            return nil
        } catch {
            XCTAssertEqual(error.fileName, "/etc/localauthd/localauthd.conf", file: file, line: line)
            return error
        }
    }

    func testDefaultsAreProtocolMd() {
        let d = DaemonConfiguration.default
        let s: Int64 = 1_000_000
        XCTAssertEqual(d.daemon.socket, "/run/localauthd/socket")
        XCTAssertEqual(d.daemon.stateDirectory, "/var/lib/localauthd")
        XCTAssertNil(d.daemon.adminGroup)
        XCTAssertEqual(d.daemon.maxConnections, 4096)
        XCTAssertEqual(d.daemon.maxConnectionsPerUser, 256)
        XCTAssertEqual(d.daemon.maxContextsPerConnection, 64)
        XCTAssertEqual(d.daemon.maxPendingBytes, 1_048_576)
        XCTAssertEqual(d.daemon.idleLineTimeout, 10 * s)
        XCTAssertEqual(d.biometry.type, .touchID)
        XCTAssertEqual(d.biometry.backend, .simulated)
        XCTAssertNil(d.biometry.attemptsPerEvaluation)
        XCTAssertEqual(d.biometry.lockoutThreshold, 5)
        XCTAssertEqual(d.biometry.promptTimeout, 60 * s)
        XCTAssertEqual(d.biometry.passcodeRequiredAfter, 0)
        XCTAssertFalse(d.biometry.passcodeRequiredAfterBoot)
        XCTAssertEqual(d.passcode.backend, .builtin)
        XCTAssertEqual(d.passcode.shadowFile, "/etc/shadow")
        XCTAssertEqual(d.passcode.clientPrompts, .agent, "S-68: session agents take passcode prompts by default")
        XCTAssertNil(d.biometry.logindBus)
        XCTAssertEqual(d.passcode.delayAfterFailures, 6)
        XCTAssertEqual(d.passcode.backoff, [60 * s, 300 * s, 900 * s, 3600 * s])
        XCTAssertEqual(d.passcode.maxPasscodeFailures, 0)
        XCTAssertEqual(d.log.segmentSize, 67_108_864)
        XCTAssertEqual(d.log.snapshotEvery, 100_000)
        XCTAssertEqual(d.rules, Rules.default)
    }

    func testProtocolSampleParsesToTheDefaults() throws {
        XCTAssertEqual(try parse(("localauthd.conf", protocolSample)), .default)
        XCTAssertEqual(try parse(("empty.conf", "")), .default)
        XCTAssertEqual(try ConfigurationParser.parse([]), .default)
    }

    func testEveryValueIsRead() throws {
        let c = try parse(("a.conf", """
            # a comment
            ; another
            [Daemon]
              Socket = /tmp/s
            StateDirectory=/tmp/state
            AdminGroup=wheel
            AuditGroup=auditors
            MaxConnections=10
            MaxConnectionsPerUser=2
            MaxContextsPerConnection=3
            MaxPendingBytes=64K
            IdleLineTimeoutSec=1.5s
            [Biometry]
            Type=faceID
            AttemptsPerEvaluation=4
            LockoutThreshold=7
            PromptTimeoutSec=2min
            PasscodeRequiredAfterSec=48h
            PasscodeRequiredAfterBoot=yes
            [Passcode]
            Backend=shadow
            ShadowFile=/tmp/shadow
            ClientPrompts=yes
            DelayAfterFailures=3
            BackoffSec=1min 5min30s
            MaxPasscodeFailures=10
            [Log]
            SegmentSize=4K
            SnapshotEvery=5
            """))
        let s: Int64 = 1_000_000
        XCTAssertEqual(c.daemon.socket, "/tmp/s")
        XCTAssertEqual(c.daemon.stateDirectory, "/tmp/state")
        XCTAssertEqual(c.daemon.adminGroup, "wheel")
        XCTAssertEqual(c.daemon.auditGroup, "auditors")
        XCTAssertEqual(c.daemon.maxConnections, 10)
        XCTAssertEqual(c.daemon.maxConnectionsPerUser, 2)
        XCTAssertEqual(c.daemon.maxContextsPerConnection, 3)
        XCTAssertEqual(c.daemon.maxPendingBytes, 65536)
        XCTAssertEqual(c.daemon.idleLineTimeout, 1_500_000)
        XCTAssertEqual(c.biometry.type, .faceID)
        XCTAssertEqual(c.biometry.attemptsPerEvaluation, 4)
        XCTAssertEqual(c.biometry.lockoutThreshold, 7)
        XCTAssertEqual(c.biometry.promptTimeout, 120 * s)
        XCTAssertEqual(c.biometry.passcodeRequiredAfter, 48 * 3600 * s)
        XCTAssertTrue(c.biometry.passcodeRequiredAfterBoot)
        XCTAssertEqual(c.passcode.backend, .shadow)
        XCTAssertEqual(c.passcode.shadowFile, "/tmp/shadow")
        XCTAssertEqual(c.passcode.clientPrompts, .yes)
        XCTAssertEqual(c.passcode.delayAfterFailures, 3)
        XCTAssertEqual(c.passcode.backoff, [60 * s, 330 * s])
        XCTAssertEqual(c.passcode.maxPasscodeFailures, 10)
        XCTAssertEqual(c.log.segmentSize, 4096)
        XCTAssertEqual(c.log.snapshotEvery, 5)
        XCTAssertEqual(c.rules, Rules(
            biometryType: .faceID, attemptsPerEvaluationOverride: 4, lockoutThreshold: 7, promptTimeout: 120 * s,
            passcodeRequiredAfter: 48 * 3600 * s, passcodeRequiredAfterBoot: true, delayAfterFailures: 3,
            backoff: [60 * s, 330 * s], maxPasscodeFailures: 10))
    }

    func testLaterFilesWinAndEmptyResets() throws {
        let c = try parse(
            ("localauthd.conf", "[Biometry]\nType=faceID\nLockoutThreshold=9\n[Daemon]\nAdminGroup=wheel\n"),
            ("10-a.conf", "[Biometry]\nType=opticID\nLockoutThreshold=\n"),
            ("20-b.conf", "[Biometry]\nType=none\nType=touchID\n[Daemon]\nAdminGroup=\n"))
        XCTAssertEqual(c.biometry.type, .touchID)
        XCTAssertEqual(c.biometry.lockoutThreshold, 5)  // reset to the default by the empty value
        XCTAssertNil(c.daemon.adminGroup)
        let base = try parse(("a", "[Passcode]\nBackoffSec=1 2 3\n"), ("b", "[Passcode]\nBackoffSec=9\n"))
        XCTAssertEqual(base.passcode.backoff, [9_000_000])  // lists are replaced, not appended to
    }

    func testSyntaxDetails() throws {
        // CRLF, a BOM, a '#' inside a value, comments after a section header.
        let c = try parse(("a", "\u{FEFF}[Daemon]   # main\r\nAdminGroup=team#1\r\nSocket=/run/x # note\r\n"))
        XCTAssertEqual(c.daemon.adminGroup, "team#1")
        XCTAssertEqual(c.daemon.socket, "/run/x")
    }

    func testErrorsNameFileAndLine() {
        let cases: [(String, Int, String)] = [
            ("[Daemon]\n\n[Nope]\n", 3, "unknown section [Nope]; known sections: [Daemon] [Biometry] [Passcode] [Log]"),
            ("[daemon]\n", 1, "unknown section [daemon]"),
            ("[Daemon]\nSockt=/x\n", 2, "unknown key 'Sockt' in [Daemon]; known keys: Socket StateDirectory"),
            ("[Log]\nType=touchID\n", 2, "unknown key 'Type' in [Log]"),
            ("Socket=/x\n", 1, "key 'Socket' outside any section"),
            ("# c\n[Daemon]\nSocket\n", 3, "malformed line 'Socket'"),
            ("[Daemon\n", 1, "malformed line '[Daemon'"),
            ("[]\n", 1, "malformed line '[]'"),
            ("[Daemon]\n=x\n", 2, "malformed line '=x'"),
            ("[Daemon]\nSocket=run/s\n", 2, "bad value 'run/s' for Socket= in [Daemon]: expected an absolute path"),
            ("[Daemon]\nStateDirectory=var\n", 2, "bad value 'var' for StateDirectory="),
            ("[Daemon]\nAdminGroup=a b\n", 2, "bad value 'a b' for AdminGroup="),
            ("[Daemon]\nAuditGroup=a b\n", 2, "bad value 'a b' for AuditGroup="),
            ("[Daemon]\nMaxConnections=0\n", 2, "bad value '0' for MaxConnections= in [Daemon]: expected an integer from 1 to"),
            ("[Daemon]\nMaxConnectionsPerUser=-1\n", 2, "bad value '-1' for MaxConnectionsPerUser="),
            ("[Daemon]\nMaxContextsPerConnection=many\n", 2, "bad value 'many' for MaxContextsPerConnection="),
            ("[Daemon]\nMaxPendingBytes=4K\n", 2, "bad value '4K' for MaxPendingBytes= in [Daemon]: expected a size of at least 8192 bytes"),
            ("[Daemon]\nMaxPendingBytes=1Q\n", 2, "expected a size such as"),
            ("[Daemon]\nIdleLineTimeoutSec=0\n", 2, "bad value '0' for IdleLineTimeoutSec= in [Daemon]: expected a time span greater than 0"),
            ("[Daemon]\nIdleLineTimeoutSec=soon\n", 2, "expected a time span such as"),
            ("[Biometry]\nType=irisID\n", 2, "bad value 'irisID' for Type= in [Biometry]: expected one of none, touchID, faceID, opticID"),
            ("[Biometry]\nBackend=libfprint\n", 2, "bad value 'libfprint' for Backend= in [Biometry]: expected one of simulated, fprintd"),
            ("[Biometry]\nFprintdBus=/run/bus\n", 2, "bad value '/run/bus' for FprintdBus= in [Biometry]: expected a D-Bus address"),
            ("[Biometry]\nFprintdBus=unix:path=/a b\n", 2, "for FprintdBus="),
            ("[Biometry]\nAttemptsPerEvaluation=0\n", 2, "bad value '0' for AttemptsPerEvaluation="),
            ("[Biometry]\nLockoutThreshold=0\n", 2, "bad value '0' for LockoutThreshold="),
            ("[Biometry]\nPromptTimeoutSec=0\n", 2, "bad value '0' for PromptTimeoutSec="),
            ("[Biometry]\nPasscodeRequiredAfterSec=-5\n", 2, "bad value '-5' for PasscodeRequiredAfterSec="),
            ("[Biometry]\nPasscodeRequiredAfterBoot=maybe\n", 2, "expected a boolean: yes, no"),
            ("[Passcode]\nBackend=pam\n", 2, "expected one of builtin, shadow"),
            ("[Passcode]\nShadowFile=etc/shadow\n", 2, "bad value 'etc/shadow' for ShadowFile="),
            ("[Passcode]\nClientPrompts=sometimes\n", 2, "expected no, agent or yes"),
            ("[Passcode]\nDelayAfterFailures=0\n", 2, "bad value '0' for DelayAfterFailures="),
            ("[Passcode]\nBackoffSec=60 0 900\n", 2, "bad value '60 0 900' for BackoffSec= in [Passcode]: expected a list of time spans greater than 0"),
            ("[Passcode]\nBackoffSec=1min 30x\n", 2, "bad value '1min 30x' for BackoffSec="),
            ("[Passcode]\nMaxPasscodeFailures=-1\n", 2, "bad value '-1' for MaxPasscodeFailures="),
            ("[Log]\nSegmentSize=1K\n", 2, "bad value '1K' for SegmentSize= in [Log]: expected a size of at least 4096 bytes"),
            ("[Log]\nSnapshotEvery=0\n", 2, "bad value '0' for SnapshotEvery="),
        ]
        for (contents, line, expected) in cases {
            guard let error = failure(contents) else { continue }
            XCTAssertEqual(error.line, line, contents)
            XCTAssertTrue(error.message.contains(expected), "\(error.message) lacks \(expected)")
            XCTAssertTrue(error.description.hasPrefix("/etc/localauthd/localauthd.conf:\(line): "), error.description)
        }
    }

    func testErrorInALaterFileNamesThatFile() {
        XCTAssertThrowsError(try parse(("main.conf", "[Log]\n"), ("50-x.conf", "\n\n[Log]\nSnapshotEvery=x\n"))) { error in
            XCTAssertEqual(String(describing: error).prefix(13), "50-x.conf:4: ")
        }
    }

    func testEveryKnownKeyIsAssignable() throws {
        for (section, keys) in ConfigurationParser.knownKeys {
            for key in keys {
                var configuration = DaemonConfiguration.default
                XCTAssertTrue(try ConfigurationParser.assign(section: section, key: key, value: "", to: &configuration),
                              "[\(section)] \(key)")
                XCTAssertEqual(configuration, .default)
            }
        }
    }

    func test_S48_theLimitKeysHaveTheirDefaultsAndBounds() throws {
        let d = DaemonConfiguration.default
        XCTAssertEqual([d.daemon.maxPropertyBytes, d.daemon.maxPropertyBytesPerContext, d.daemon.maxPropertyBytesPerUser], [512, 1024, 256 << 10])
        XCTAssertEqual([d.log.userEventRate, d.log.userEventBurst, d.log.reserveSpace], [20, 200, 64 << 20])
        let set = try parse(("a.conf", """
            [Daemon]
            MaxPropertyBytes=1K
            MaxPropertyBytesPerContext=2K
            MaxPropertyBytesPerUser=1M
            [Log]
            UserEventRate=0
            UserEventBurst=5
            ReserveSpace=0
            """))
        XCTAssertEqual([set.daemon.maxPropertyBytes, set.daemon.maxPropertyBytesPerContext, set.daemon.maxPropertyBytesPerUser], [1024, 2048, 1 << 20])
        XCTAssertEqual([set.log.userEventRate, set.log.userEventBurst, set.log.reserveSpace], [0, 5, 0])
        // A value no line can carry, a burst of nothing and a negative rate are refused with the key.
        for (text, key) in [("[Daemon]\nMaxPropertyBytes=9K", "MaxPropertyBytes"), ("[Log]\nUserEventBurst=0", "UserEventBurst"),
                            ("[Log]\nUserEventRate=-1", "UserEventRate"), ("[Log]\nReserveSpace=lots", "ReserveSpace")] {
            guard let error = failure(text) else { continue }
            XCTAssertTrue(error.message.contains(key), error.message)
        }
    }

    func testDropInOrder() {
        XCTAssertEqual(
            ConfigurationParser.dropInOrder(["b.conf", "10-z.conf", "a.conf.bak", "README", ".hidden.conf", "B.conf",
                                             "2-a.conf", "\u{e9}.conf", "a.conf", "dir.conf.d"]),
            ["10-z.conf", "2-a.conf", "B.conf", "a.conf", "b.conf", "\u{e9}.conf"])
    }

    func testRandomGarbageNeverCrashes() {
        var rng = SeededGenerator(seed: 0xC0F1)
        let pieces = ["[", "]", "Daemon", "Biometry", "Log", "Passcode", "=", "#", ";", " ", "\t", "\n", "\r", "Socket",
                      "Type", "BackoffSec", "SegmentSize", "/", "1", "9", "M", "min", "s", ".", "-", "yes", "\u{e9}",
                      "\u{0}", "touchID", "99999999999999999999"]
        var parsed = 0
        for _ in 0..<3000 {
            let text = (0..<Int.random(in: 0...40, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            do {
                _ = try ConfigurationParser.parse([(fileName: "fuzz.conf", contents: text)])
                parsed += 1
            } catch {
                XCTAssertGreaterThanOrEqual(error.line, 1)
                XCTAssertFalse(error.message.isEmpty)
            }
        }
        XCTAssertGreaterThan(parsed, 0)
    }
}


extension ConfigurationParserTests {
    func test_S68_clientPromptsTakesNoAgentOrYesAndTheBooleansOfBefore() throws {
        for (text, expected) in [("agent", ClientPrompts.agent), ("no", .no), ("false", .no), ("0", .no), ("yes", .yes),
                                 ("true", .yes), ("on", .yes)] {
            XCTAssertEqual(try parse(("a.conf", "[Passcode]\nClientPrompts=\(text)")).passcode.clientPrompts, expected, text)
        }
        let error = failure("[Passcode]\nClientPrompts=agents")
        XCTAssertTrue(error?.message.contains("no, agent or yes") == true, error?.message ?? "accepted")
        XCTAssertEqual(try parse(("a.conf", "[Biometry]\nLogindBus=unix:path=/tmp/bus")).biometry.logindBus, "unix:path=/tmp/bus")
    }
}
