// Issue 27 item 11: localauthd.conf(5) said it described every key, but
// lacked ReserveSpace=, UserEventRate=, UserEventBurst= and nine others.
// The page's keys (`*Key=*` lines under `# [Section]`) and the sample file's
// (`#Key=` lines under `[Section]`) must be exactly the parser's table,
// section by section, so that a key added to one cannot be missing from the
// others again.

import Foundation
import LocalAuthConfig
import XCTest

final class ManualPageKeyTests: XCTestCase {
    /// The repository's root, from this file's path.
    private var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private var parserKeys: [String: Set<String>] {
        Dictionary(uniqueKeysWithValues: ConfigurationParser.knownKeys.map { ($0.section, Set($0.keys)) })
    }

    /// Section -> keys of `text`, where `section(line)` names a section
    /// header and `key(line)` a key line.
    private func keys(_ text: String, section: (String) -> String?, key: (String) -> String?) -> [String: Set<String>] {
        var found: [String: Set<String>] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let name = section(line) {
                current = name
            } else if let name = key(line) {
                XCTAssertNotNil(current, "\(name)= before any section")
                found[current ?? "", default: []].insert(name)
            }
        }
        return found
    }

    private func assertSameKeys(_ documented: [String: Set<String>], _ what: String) {
        let parser = parserKeys
        for (section, keys) in parser {
            let missing = keys.subtracting(documented[section] ?? [])
            XCTAssertTrue(missing.isEmpty, "\(what) lacks [\(section)] \(missing.sorted().map { "\($0)=" }.joined(separator: " "))")
        }
        for (section, keys) in documented {
            let unknown = keys.subtracting(parser[section] ?? [])
            XCTAssertTrue(unknown.isEmpty, "\(what) has [\(section)] \(unknown.sorted().map { "\($0)=" }.joined(separator: " ")), which the parser does not take")
        }
    }

    func test_item11_theManualPageDescribesExactlyTheParsersKeys() throws {
        let page = try String(contentsOf: root.appendingPathComponent("docs/man/localauthd.conf.5.scd"), encoding: .utf8)
        let documented = keys(page, section: { line in
            guard line.hasPrefix("# ["), line.hasSuffix("]") else { return nil }
            return String(line.dropFirst(3).dropLast())
        }, key: { line in
            // A key's entry: `*Key=*` alone at the start of a line.
            guard line.hasPrefix("*"), line.hasSuffix("=*"), !line.contains(" ") else { return nil }
            return String(line.dropFirst().dropLast(2))
        })
        XCTAssertFalse(documented.isEmpty, "the page's keys were found")
        assertSameKeys(documented, "localauthd.conf(5)")
    }

    func test_item11_theSampleFileShowsExactlyTheParsersKeys() throws {
        let sample = try String(contentsOf: root.appendingPathComponent("config/localauthd.conf"), encoding: .utf8)
        let shown = keys(sample, section: { line in
            guard line.hasPrefix("["), line.hasSuffix("]") else { return nil }
            return String(line.dropFirst().dropLast())
        }, key: { line in
            // A commented default: `#Key=value`, no space after the `#`.
            guard line.hasPrefix("#"), let equals = line.firstIndex(of: "="),
                  line[line.index(after: line.startIndex)..<equals].allSatisfy({ $0.isLetter || $0.isNumber }),
                  line.index(after: line.startIndex) < equals else { return nil }
            return String(line[line.index(after: line.startIndex)..<equals])
        })
        XCTAssertFalse(shown.isEmpty, "the sample's keys were found")
        assertSameKeys(shown, "config/localauthd.conf")
    }
}
