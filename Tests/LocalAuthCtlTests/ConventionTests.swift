// The conventions an administrator expects of localauthctl (issue 20):
// --version; log's -n/--lines, -r/--reverse and -f; --since as journalctl
// reads it (today, yesterday, 1h, "1h ago"); one documented exit status per
// kind of outcome; "no such user"; evaluate with --secret-stdin, and without
// a terminal or it, a passcode prompt ends at once.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class ConventionTests: CtlTestCase {
    func testVersionPrintsTheReleaseVersion() throws {
        let result = try ctl(["--version"])
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertNotNil(result.out.range(of: #"^localauthctl \d+\.\d+\.\d+\n$"#, options: .regularExpression), result.out)
        let daemonVersion = try runToCompletion(try Binary.localauthd(), ["--version"]).1
        XCTAssertEqual(result.out.split(separator: " ").last, daemonVersion.split(separator: " ").last, "one version")
    }

    /// The log's short lines (seq is the second word), read offline.
    func logSeqs(_ options: [String]) throws -> [Int] {
        let result = try ctl(["log", "-D", daemon.stateDirectory, "--no-pager"] + options)
        XCTAssertEqual(result.code, 0, result.err)
        return result.lines.compactMap { Int($0.split(separator: " ")[1]) }
    }

    func testLogLinesAndReverseAsJournalctl() throws {
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let all = try logSeqs([])
        XCTAssertGreaterThan(all.count, 3)
        XCTAssertEqual(try logSeqs(["-n", "2"]), Array(all.suffix(2)), "-n N: the newest N")
        XCTAssertEqual(try logSeqs(["--lines=2"]), Array(all.suffix(2)))
        XCTAssertEqual(try logSeqs(["-r"]), all.reversed(), "-r: newest first")
        XCTAssertEqual(try logSeqs(["--reverse", "-n", "1"]), [all.last!])
        XCTAssertEqual(try logSeqs(["-n", "1000"]), all, "more than there is: all of it")
        XCTAssertEqual(try logSeqs(["-n", "0"]), [])
        // -n with a filter counts the matching events only (uid 0 by the index).
        let mine = try logSeqs(["--uid", "0"])
        XCTAssertEqual(try logSeqs(["--uid", "0", "-n", "1"]), [mine.last!])
        // -o json takes -n too: the newest event's seq.
        let json = try ctl(["log", "-D", daemon.stateDirectory, "-o", "json", "-n", "1"])
        XCTAssertEqual(jsonObject(json.out)["seq"] as? Int, all.last)
    }

    func testLogFollowHasAShortSpellingAndRefusesReverse() throws {
        let help = try ctl(["log", "--help"])
        XCTAssertTrue(help.out.contains("-f, --follow"), help.out)
        XCTAssertTrue(help.out.contains("-n, --lines N"), help.out)
        XCTAssertTrue(help.out.contains("-r, --reverse"), help.out)
        let both = try ctl(["log", "-D", daemon.stateDirectory, "-f", "-r"])
        XCTAssertEqual(both.code, 2, both.err)
        XCTAssertTrue(both.err.contains("--reverse and --follow"), both.err)
        let bad = try ctl(["log", "-D", daemon.stateDirectory, "-n", "lots"])
        XCTAssertEqual(bad.code, 2, bad.err)
    }

    func testSinceTakesJournalctlSpellings() throws {
        try admin.ok("set-passcode secret=1234")
        let all = try logSeqs([])
        for since in ["today", "yesterday", "1h", "1h ago", "-1h", "2 days ago"] {
            XCTAssertEqual(try logSeqs(["--since", since]), all, "--since \(since): everything just written")
        }
        XCTAssertEqual(try logSeqs(["--since", "tomorrow"]), [], "nothing happened tomorrow")
        XCTAssertEqual(try logSeqs(["--until", "yesterday"]), [], "nothing before yesterday")
        let bad = try ctl(["log", "-D", daemon.stateDirectory, "--since", "last tuesday"])
        XCTAssertEqual(bad.code, 2, bad.err)
        XCTAssertTrue(bad.err.contains("today, yesterday"), "says what it accepts: \(bad.err)")
    }

    func testEachKindOfOutcomeHasItsOwnExitStatus() throws {
        // 1: the daemon answered no (an LAError).
        var result = try ctl(["can-evaluate", "--policy", "biometrics"] + socket)
        XCTAssertEqual(result.code, 1, result.out + result.err)
        // 3: refused (a protocol error): the sensor with no prompt waiting.
        result = try ctl(["sensor", "--uid", "0", "match"] + socket)
        XCTAssertEqual(result.code, 3, result.err)
        result = try ctl(["call", "bogus-verb"] + socket)
        XCTAssertEqual(result.code, 3, result.out)
        // 4: unreachable.
        result = try ctl(["status", "--socket", daemon.directory.path + "/no-such-socket"])
        XCTAssertEqual(result.code, 4, result.err)
        result = try ctl(["evaluate", "--socket", daemon.directory.path + "/no-such-socket"])
        XCTAssertEqual(result.code, 4, result.err)
        // 2: bad usage.
        result = try ctl(["status", "--frobnicate"] + socket)
        XCTAssertEqual(result.code, 2, result.err)
        // The help documents all of them.
        let help = try ctl(["--help"]).out
        for text in ["1 the daemon answered no", "2 bad usage", "3 the daemon refused", "4 the daemon is unreachable"] {
            XCTAssertTrue(help.contains(text), "--help says '\(text)': \(help)")
        }
    }

    func testAnUnknownUserNameIsNoSuchUser() throws {
        for arguments in [["status", "--uid", "no-such-user-here"], ["reset", "--uid", "no-such-user-here"],
                          ["log", "-D", daemon.stateDirectory, "--uid", "no-such-user-here"]] {
            let result = try ctl(arguments + (arguments[0] == "log" ? [] : socket))
            XCTAssertEqual(result.code, 2, "\(arguments): \(result.err)")
            XCTAssertTrue(result.err.contains("no such user 'no-such-user-here'"), result.err)
        }
        let root = try ctl(["status", "--uid", "root", "-o", "json"] + socket)
        XCTAssertEqual(root.code, 0, "a user name that exists works: \(root.err)")
    }

    func testEvaluateWithSecretStdinAnswersThePasscodePrompt() throws {
        try admin.ok("set-passcode secret=1234")
        var result = try ctl(["evaluate", "--policy", "owner", "--secret-stdin"] + socket, input: "1234\n")
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertEqual(result.out, "Authenticated (passcode)\n")
        XCTAssertFalse(result.out.contains("1234") || result.err.contains("1234"), "the secret is never printed")
        result = try ctl(["evaluate", "--policy", "owner", "--secret-stdin"] + socket, input: "9999\n\n")
        XCTAssertEqual(result.code, 1, "a wrong one, then Cancel: \(result.err)")
        XCTAssertTrue(result.err.contains("userCancel"), result.err)
    }

    func testEvaluateWithoutATerminalOrSecretStdinEndsAtTheFirstPasscodePrompt() throws {
        try admin.ok("set-passcode secret=1234")
        // No terminal here (stdin is a pipe, the test has no controlling tty
        // in CI). The prompt would wait PromptTimeoutSec (60 s) for an answer.
        guard open("/dev/tty", O_RDWR | O_NOCTTY) < 0 else { throw XCTSkip("this test runs with a terminal") }
        let result = try ctl(["evaluate", "--policy", "owner"] + socket)
        XCTAssertEqual(result.code, 1, result.err)
        XCTAssertTrue(result.err.contains("notInteractive"), result.err)
    }
}
