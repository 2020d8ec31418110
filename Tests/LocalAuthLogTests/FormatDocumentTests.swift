// FORMAT.md is the auditor's contract for the log's bytes. These tests read
// its tables (the record framing, the field encodings, every event kind's
// fields and layout) and decode one record of every kind with a decoder
// written from those tables alone: no EventCodec, no ByteReader. A field
// order, width, encoding or layout version the page gets wrong fails here,
// and so does a kind the code has and the page does not list.
//
// A new event kind (or a new layout of one) needs its row in FORMAT.md's
// "Kinds" table and a sample in `FormatDocumentSamples.sample(_:)`, whose
// switch is exhaustive on purpose.

import Foundation
import LocalAuthCore
import LocalAuthSystem
import XCTest

@testable import LocalAuthLog

final class FormatDocumentTests: XCTestCase {
    private var format: FormatDocument!

    override func setUpWithError() throws {
        format = try FormatDocument.load()
    }

    func test_everyKindOfTheCodecIsInTheDocumentWithItsCodeNameLayoutAndKeys() throws {
        XCTAssertEqual(format.kinds.map(\.code), EventKind.allCases.map(\.rawValue), "the Kinds table's codes, in order")
        for kind in EventKind.allCases {
            guard let row = format.kinds.first(where: { $0.code == kind.rawValue }) else { continue }
            XCTAssertEqual(row.name, kind.name, "code \(kind.rawValue)")
            XCTAssertEqual(row.layout, kind.layoutVersion, "\(kind.name)'s layout")
            XCTAssertEqual(row.laterFields.isEmpty, kind.layoutVersion == 1, "\(kind.name): fields added by layout 2")
            let body = FormatDocumentSamples.sample(kind).body
            XCTAssertEqual(row.keys.contains("uid"), body.uid != nil, "\(kind.name)'s uid key")
            if row.keys.contains("ctx?") {  // only when the payload holds one
                XCTAssertTrue(row.fields.contains(DocumentedField(name: "ctx", encoding: "opt ctx16")), "\(kind.name)'s optional ctx")
            } else {
                XCTAssertEqual(row.keys.contains("ctx"), body.ctx != nil, "\(kind.name)'s ctx key")
            }
        }
    }

    func test_theFieldEncodingsTableNamesExactlyWhatTheKindsUse() {
        let used = Set((format.kinds.flatMap { $0.fields + $0.laterFields } + format.rules).flatMap { $0.encoding.split(separator: " ").map(String.init) })
        XCTAssertEqual(Set(format.encodings), FormatDecoder.encodings, "the Field encodings table")
        XCTAssertTrue(used.isSubset(of: FormatDecoder.encodings), "encodings used but not defined: \(used.subtracting(FormatDecoder.encodings))")
    }

    func test_oneRecordOfEveryKindDecodesWithTheDocumentsTablesAlone() throws {
        for (index, kind) in EventKind.allCases.enumerated() {
            let (body, expected) = FormatDocumentSamples.sample(kind)
            let seq = UInt64(4_000_000_000 + index), time: Int64 = 1_764_000_000_123_456 + Int64(index)
            let payload = EventCodec.encode(body)
            var record: [UInt8] = []
            payload.withUnsafeBytes {
                RecordFormat.encode(seq: seq, time: time, keys: RecordKeys(type: kind.rawValue, uid: body.uid, context: body.ctx),
                                   payload: $0, into: &record)
            }

            let framing = try format.record.decode(record)
            XCTAssertEqual(framing.seq, seq, kind.name)
            XCTAssertEqual(framing.time, time, kind.name)
            XCTAssertEqual(framing.uid, body.uid, kind.name)
            XCTAssertEqual(framing.context, body.ctx?.hex, kind.name)
            let row = try XCTUnwrap(format.kinds.first { $0.code == framing.type }, "type code \(framing.type) is not in the Kinds table")
            XCTAssertEqual(row.name, kind.name)

            var decoder = FormatDecoder(framing.payload, rules: format.rules)
            XCTAssertEqual(try decoder.byte(), UInt64(row.layout), "\(kind.name): the layout byte")
            var fields = try decoder.fields(row.fields)
            if row.layout >= 2 { fields += try decoder.fields(row.laterFields) }
            XCTAssertTrue(decoder.isAtEnd, "\(kind.name): \(decoder.remaining) bytes left after the documented fields")
            XCTAssertEqual(fields, expected, "\(kind.name) as FORMAT.md decodes it")
        }
    }

    /// Every file name the "Directory layout" block shows is one the code makes.
    func test_theDirectoryLayoutNamesTheFilesAsTheCodeNamesThem() throws {
        XCTAssertGreaterThanOrEqual(format.paths.count, 6, "the Directory layout block")
        for path in format.paths {
            let name = String(path.split(separator: "/").last ?? "")
            let stem = String(name.prefix(16))
            let seq = UInt64(stem, radix: 16)
            switch true {
            case path.hasPrefix("log/") && name.hasSuffix(".seg.broken"):
                XCTAssertEqual(name, SegmentName.fileName(try XCTUnwrap(seq, path)) + ".broken", path)
            case path.hasPrefix("log/") && name.hasSuffix(".seg.seal"):
                XCTAssertEqual(name, SegmentSeal.fileName(try XCTUnwrap(seq, path)), path)
            case path.hasPrefix("log/"):
                XCTAssertEqual(name, SegmentName.fileName(try XCTUnwrap(SegmentName.parse(name), path)), path)
            case path.hasPrefix("snapshots/"):
                XCTAssertEqual("/" + path, SnapshotStore(directory: "").path(try XCTUnwrap(seq, path)), path)
            case path.hasPrefix("repair-"):
                // Repair.makeFolder: repair-YYYYMMDDTHHMMSSZ (UTC).
                let stamp = Array(name.dropFirst("repair-".count).utf8)
                XCTAssertEqual(stamp.count, 16, path)
                let shape = stamp.enumerated().allSatisfy { index, byte in
                    index == 8 ? byte == UInt8(ascii: "T") : index == 15 ? byte == UInt8(ascii: "Z") : (48...57).contains(byte)
                }
                XCTAssertTrue(shape, path)
            default:
                XCTFail("a path the test does not know: \(path)")
            }
        }
    }

    /// Every source file the page names exists (LocalAuthLog's, LocalAuthCore's
    /// `Codec/`, or a path from the repository's root).
    func test_everySourceFileThePageNamesExists() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        XCTAssertGreaterThanOrEqual(format.sourceFiles.count, 10)
        for name in format.sourceFiles {
            let path = name.hasPrefix("Tests/") || name.hasPrefix("Sources/") ? name
                : name.hasPrefix("Codec/") ? "Sources/LocalAuthCore/" + name : "Sources/LocalAuthLog/" + name
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/" + path), "FORMAT.md names \(name): no \(path)")
        }
    }

    /// "A payload of an older layout simply stops before them": the codec
    /// must read the layout-1 form the page describes for every kind that grew.
    func test_anOlderLayoutAsTheDocumentDescribesItStillDecodes() throws {
        for row in format.kinds where row.layout >= 2 {
            let kind = try XCTUnwrap(EventKind(rawValue: row.code))
            let (body, expected) = FormatDocumentSamples.sample(kind)
            let payload = EventCodec.encode(body)
            var decoder = FormatDecoder(payload, rules: format.rules)
            _ = try decoder.byte()
            _ = try decoder.fields(row.fields)
            let layoutOne = [1] + payload[1..<decoder.offset]
            let decoded = try EventCodec.decode(kind: row.code, payload: layoutOne)
            var again = FormatDecoder(EventCodec.encode(decoded), rules: format.rules)
            _ = try again.byte()
            XCTAssertEqual(try again.fields(row.fields), Array(expected.prefix(row.fields.count)), "\(row.name) layout 1")
        }
    }

    /// What the page says is refused: trailing bytes, a layout above the
    /// kind's, a type code not in the table.
    func test_whatTheDocumentRefusesTheCodecRefuses() throws {
        for row in format.kinds {
            let kind = try XCTUnwrap(EventKind(rawValue: row.code))
            let payload = EventCodec.encode(FormatDocumentSamples.sample(kind).body)
            XCTAssertThrowsError(try EventCodec.decode(kind: row.code, payload: payload + [0]), "\(row.name) with a trailing byte")
            XCTAssertThrowsError(try EventCodec.decode(kind: row.code, payload: [row.layout + 1] + payload.dropFirst()),
                                 "\(row.name) at layout \(row.layout + 1)")
            XCTAssertThrowsError(try EventCodec.decode(kind: row.code, payload: [0] + payload.dropFirst()), "\(row.name) at layout 0")
        }
        let unknown = (format.kinds.map(\.code).max() ?? 0) + 1
        XCTAssertThrowsError(try EventCodec.decode(kind: unknown, payload: [1]))
        XCTAssertThrowsError(try EventCodec.decode(kind: 0, payload: [1]))
    }
}
