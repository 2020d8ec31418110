// The shadow file read as hostile input (S-44): only well-formed lines are
// entries, the first line of a name wins, locked and disabled hashes are not
// usable, and the size is bounded.
import Foundation
import XCTest
@testable import LocalAuthSystem
import LocalAuthTestSupport

final class ShadowFileTests: XCTestCase {
    let text = """
        root:*:19000:0:99999:7:::
        alice:$y$j9T$abc$def:19000:0:99999:7:::
        bob:!$y$j9T$abc$def:19000::::::
        carol::19000::::::
        alice:$6$second$line:19000::::::
        +nis:x:::::::
        -other:x:::::::
        cut-short
        dave:$y$no-second-colon
        :$y$nameless:1::::::
        eve:$y$with space:1::::::
        fr\u{00e9}d:$y$x:1::::::

        """

    func test_S44_onlyWellFormedLinesAreEntriesAndTheFirstLineOfANameWins() {
        let bytes = Array(text.utf8)
        XCTAssertEqual(ShadowFile.usability(bytes), ["root": false, "alice": true, "bob": false, "carol": false])
        XCTAssertEqual(ShadowFile.hash(for: "alice", in: bytes), "$y$j9T$abc$def")
        XCTAssertEqual(ShadowFile.hash(for: "carol", in: bytes), "")
        for name in ["dave", "eve", "nis", "+nis", "cut-short", "nobody", ""] {
            XCTAssertNil(ShadowFile.hash(for: name, in: bytes), name)
        }
    }

    func test_S44_usableMeansNotEmptyNotLockedNotDisabled() {
        XCTAssertTrue(ShadowFile.isUsable("$y$j9T$abc$def"))
        XCTAssertTrue(ShadowFile.isUsable("abJnggxhB/yWI"), "a DES hash is a hash")
        for hash in ["", "!", "!$y$abc", "*", "*LK*", "!!"] { XCTAssertFalse(ShadowFile.isUsable(hash), hash) }
    }

    func test_S44_aFileLargerThanItsBoundIsRefusedAndAMissingOneThrows() throws {
        let scratch = TemporaryDirectory()
        let directory = scratch.path
        let path = directory + "/shadow"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(count: 4097)))
        XCTAssertThrowsError(try ShadowFile.withContents(path, maxSize: 4096) { $0.count })
        XCTAssertEqual(try ShadowFile.withContents(path, maxSize: 4097) { $0.count }, 4097)
        XCTAssertEqual(ShadowFile.maximumSize, 16 << 20)
        XCTAssertThrowsError(try ShadowFile.withContents(directory + "/missing") { $0.count })
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try ShadowFile.withContents(path) { ShadowFile.hash(for: "alice", in: $0) }, "$y$j9T$abc$def")
    }
}
