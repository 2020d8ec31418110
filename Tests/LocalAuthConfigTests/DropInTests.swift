// The drop-in directories and their precedence (systemd's: /etc over /run
// over /usr/lib for one file name, every name applied in name order), and
// the check behind `localauthd --test-config`: every problem with its file
// and line, and the effective configuration as INI text that parses back.

import XCTest
@testable import LocalAuthConfig

final class DropInTests: XCTestCase {
    let etc = "/etc/localauthd/localauthd.conf.d"
    let run = "/run/localauthd/localauthd.conf.d"
    let lib = "/usr/lib/localauthd/localauthd.conf.d"

    /// `paths` over a fake file system: directory -> entry names.
    func paths(_ tree: [String: [String]]) -> [String] {
        ConfigurationFiles.paths { tree[$0] }
    }

    func test_the_main_file_comes_first_and_alone_without_drop_in_directories() {
        XCTAssertEqual(paths([:]), ["/etc/localauthd/localauthd.conf"])
    }

    func test_a_drop_in_in_etc_is_read() {
        XCTAssertEqual(paths([etc: ["50-local.conf"]]).dropFirst(), ["\(etc)/50-local.conf"])
    }

    func test_a_drop_in_in_run_is_read() {
        XCTAssertEqual(paths([run: ["50-runtime.conf"]]).dropFirst(), ["\(run)/50-runtime.conf"])
    }

    func test_a_drop_in_in_usr_lib_is_read() {
        XCTAssertEqual(paths([lib: ["50-vendor.conf"]]).dropFirst(), ["\(lib)/50-vendor.conf"])
    }

    func test_one_name_in_several_directories_is_read_from_etc_then_run_then_usr_lib() {
        XCTAssertEqual(paths([etc: ["50-x.conf"], run: ["50-x.conf"], lib: ["50-x.conf"]]).dropFirst(), ["\(etc)/50-x.conf"])
        XCTAssertEqual(paths([run: ["50-x.conf"], lib: ["50-x.conf"]]).dropFirst(), ["\(run)/50-x.conf"])
    }

    func test_names_are_applied_in_name_order_whatever_their_directory() {
        let order = paths([etc: ["20-b.conf"], run: ["30-c.conf"], lib: ["10-a.conf", "40-d.conf"]]).dropFirst()
        XCTAssertEqual(Array(order), ["\(lib)/10-a.conf", "\(etc)/20-b.conf", "\(run)/30-c.conf", "\(lib)/40-d.conf"])
    }

    func test_only_visible_conf_files_count() {
        XCTAssertEqual(paths([etc: [".hidden.conf", "notes.txt", "a.conf.dpkg-old", "a.conf"]]).dropFirst(), ["\(etc)/a.conf"])
    }

    func test_a_later_name_wins_and_an_empty_etc_file_masks_the_packaged_one() throws {
        let files: [(fileName: String, contents: String)] = [
            ("\(lib)/10-vendor.conf", "[Biometry]\nLockoutThreshold=7\n"),
            ("\(run)/20-runtime.conf", "[Biometry]\nLockoutThreshold=8\n"),
        ]
        XCTAssertEqual(try ConfigurationParser.parse(files).biometry.lockoutThreshold, 8)
        // /etc/…/20-runtime.conf (empty) hides the /run one of the same name.
        let masked = paths([etc: ["20-runtime.conf"], run: ["20-runtime.conf"], lib: ["10-vendor.conf"]])
        XCTAssertEqual(Array(masked.dropFirst()), ["\(lib)/10-vendor.conf", "\(etc)/20-runtime.conf"])
        let contents = ["\(lib)/10-vendor.conf": files[0].contents, "\(etc)/20-runtime.conf": ""]
        let read = masked.dropFirst().map { (fileName: $0, contents: contents[$0]!) }
        XCTAssertEqual(try ConfigurationParser.parse(read).biometry.lockoutThreshold, 7)
    }

    func test_check_reports_every_problem_with_file_and_line_and_keeps_going() {
        let check = ConfigurationParser.check([
            ("/a.conf", "[Daemon]\nMaxConnections=10\nNoSuchKey=1\n[NoSuchSection]\nIgnored=1\n"),
            ("/b.conf", "[Biometry]\nLockoutThreshold=lots\nPromptTimeoutSec=30\n"),
        ])
        XCTAssertEqual(check.problems.map { String($0.description.prefix(9)) }, ["/a.conf:3", "/a.conf:4", "/b.conf:2"])
        XCTAssertEqual(check.problems.map { String("\($0.problem)".prefix(9)) }, ["unknownKe", "unknownSe", "badValue("])
        // The good lines still took effect.
        XCTAssertEqual(check.configuration.daemon.maxConnections, 10)
        XCTAssertEqual(check.configuration.biometry.promptTimeout, 30_000_000)
    }

    func test_the_daemon_parse_stops_at_an_unknown_key_as_the_contract_says() {
        XCTAssertThrowsError(try ConfigurationParser.parse([("/a.conf", "[Daemon]\nNoSuchKey=1\n")])) { error in
            XCTAssertEqual("\(error)".prefix(10), "/a.conf:2:")
        }
    }

    func test_the_effective_configuration_names_origins_and_parses_back_to_itself() throws {
        let check = ConfigurationParser.check([
            ("/a.conf", "[Biometry]\nPromptTimeoutSec=1.5s\n[Passcode]\nBackoffSec=1min 2h\n[Daemon]\nAdminGroup=wheel\n"),
        ])
        XCTAssertTrue(check.problems.isEmpty)
        let text = check.text(overrides: ["Daemon.Socket": "--socket"])
        XCTAssertTrue(text.contains("PromptTimeoutSec=1.5  # /a.conf:2\n"), text)
        XCTAssertTrue(text.contains("BackoffSec=60 7200  # /a.conf:4\n"), text)
        XCTAssertTrue(text.contains("Socket=/run/localauthd/socket  # --socket\n"), text)
        XCTAssertTrue(text.contains("\n#LockoutThreshold=5\n"), text)
        let again = try ConfigurationParser.parse([("effective", text)])
        XCTAssertEqual(again, check.configuration)
    }
}
