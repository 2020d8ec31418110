// Tables for the value syntaxes.

import XCTest
@testable import LocalAuthConfig

final class ConfigurationValueTests: XCTestCase {
    let second: Int64 = 1_000_000

    func testTimeSpans() throws {
        let table: [(String, Int64)] = [
            ("0", 0), ("10", 10 * second), ("10s", 10 * second), ("10 s", 10 * second), ("10sec", 10 * second),
            ("500ms", 500_000), ("500msec", 500_000), ("250us", 250), ("1.5s", 1_500_000), (".5s", 500_000),
            ("2min", 120 * second), ("2m", 120 * second), ("1min 30s", 90 * second), ("1min30s", 90 * second),
            ("1h", 3600 * second), ("1h 1min 1s 1ms", 3661 * second + 1000), ("1d", 86400 * second),
            ("1w", 7 * 86400 * second), ("3 minutes", 180 * second), (" 7 ", 7 * second), ("1.25min", 75 * second), ("1min 30", 90 * second), ("15250w", 15250 * 7 * 86400 * second),
            ("0.000001s", 1), ("0.0000019s", 1),
        ]
        for (text, expected) in table {
            XCTAssertEqual(try ConfigurationValue.timeSpan(text), expected, text)
        }
        for bad in ["", " ", "s", "-1", "10x", "1.2.3", "1 min x", "10 parsecs", "99999999999999999999", "1e3",
                    "16000000w", "300000000000000s", "1min,30s", "1 2", "1 min 2 3"] {
            XCTAssertThrowsError(try ConfigurationValue.timeSpan(bad), bad)
        }
    }

    func testSizes() throws {
        let table: [(String, Int)] = [
            ("0", 0), ("8192", 8192), ("1K", 1024), ("64K", 65536), ("1M", 1_048_576), ("64M", 67_108_864),
            ("2G", 2_147_483_648), ("1T", 1 << 40), ("512B", 512), ("1.5K", 1536), ("1 M", 1_048_576), ("0.5G", 1 << 29), ("1.0000000000000000001K", 1024),
        ]
        for (text, expected) in table {
            XCTAssertEqual(try ConfigurationValue.size(text), expected, text)
        }
        for bad in ["", "M", "1m", "1MB", "1KiB", "-1", "1 2", "1X", "99999999999999999999", "9000000T"] {
            XCTAssertThrowsError(try ConfigurationValue.size(bad), bad)
        }
    }

    func testBooleans() throws {
        for yes in ["yes", "true", "1", "on", "YES", "True", "y", "t"] {
            XCTAssertTrue(try ConfigurationValue.boolean(yes), yes)
        }
        for no in ["no", "false", "0", "off", "NO", "Off", "n", "f"] {
            XCTAssertFalse(try ConfigurationValue.boolean(no), no)
        }
        for bad in ["", "2", "maybe", "yess", " yes"] {
            XCTAssertThrowsError(try ConfigurationValue.boolean(bad), bad)
        }
    }

    func testIntegers() throws {
        XCTAssertEqual(try ConfigurationValue.integer("5", in: 1...10), 5)
        XCTAssertEqual(try ConfigurationValue.integer("10", in: 1...10), 10)
        for bad in ["0", "11", "", "+5", "5.0", "five", " 5", "99999999999999999999"] {
            XCTAssertThrowsError(try ConfigurationValue.integer(bad, in: 1...10), bad) { error in
                XCTAssertEqual((error as? ValueError)?.expected, "an integer from 1 to 10")
            }
        }
    }

    func testLists() {
        XCTAssertEqual(ConfigurationValue.list("60 300\t 900  3600"), ["60", "300", "900", "3600"])
        XCTAssertEqual(ConfigurationValue.list("  "), [])
    }
}
