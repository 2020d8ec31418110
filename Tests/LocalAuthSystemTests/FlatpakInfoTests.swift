// S-73: a Flatpak app id, from a file its process chose. The parser takes
// only `[Application] name=` with a valid application id.
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class FlatpakInfoTests: XCTestCase {
    private func id(_ text: String) -> String? { FlatpakInfo.applicationID(in: Array(text.utf8)) }

    func test_S73_theApplicationGroupsNameIsTheAppID() {
        XCTAssertEqual(id("[Application]\nname=org.example.Notes\nruntime=runtime/x/y/z\n"), "org.example.Notes")
        XCTAssertEqual(id("[Instance]\nname=org.evil.Other\n[Application]\nname = org.example.Notes \n"), "org.example.Notes",
                       "another group's name does not count; spaces around = are trimmed")
        XCTAssertEqual(id("[Application]\nname=org.a.First\nname=org.a.Second\n"), "org.a.Second", "the last assignment wins")
        XCTAssertEqual(id("# comment\n\n[Application]\r\nname=org.example.Crlf\r\n"), "org.example.Crlf")
        XCTAssertEqual(id("[Application]\nname=org.example.My-App_2\n"), "org.example.My-App_2")
    }

    func test_S73_aNameThatIsNoApplicationIDIsNothing() {
        for bad in ["", "[Application]\n", "[Application]\nname=\n", "[Application]\nname=org.example\n",
                    "[Application]\nname=../../etc/shadow\n", "[Application]\nname=org.1example.App\n",
                    "[Application]\nname=org.exa-mple.App\n", "[Application]\nname=org..App\n",
                    "[Application]\nname=org.example.App\u{0}\n", "[Application]\nname=org.example.Ünicode\n",
                    "[Application]\nname=org.example." + String(repeating: "a", count: 250) + "\n",
                    "[Applications]\nname=org.example.Notes\n", "name=org.example.Notes\n"] {
            XCTAssertNil(id(bad), bad.debugDescription)
        }
        XCTAssertNil(FlatpakInfo.applicationID(in: [0x5b, 0xff, 0x5d]), "not UTF-8")
    }

    func test_S73_aProcessWithoutTheFileHasNoAppID() throws {
        // This process's root has no /.flatpak-info (a sandbox would).
        guard access("/.flatpak-info", F_OK) != 0 else { throw XCTSkip("running inside a Flatpak sandbox") }
        XCTAssertNil(FlatpakInfo.applicationID(pid: getpid(), stillThere: { true }))
        XCTAssertNil(FlatpakInfo.applicationID(pid: 0, stillThere: { true }))
    }
}
