// FORMAT.md's tables, read as data (FormatDocumentTests): the record's
// framing from its "Record" block, the encodings, the "Kinds" table and the
// rules layout. Only the page's text is used, so a wrong table is a failing
// test rather than a wrong audit.

import Foundation
import LocalAuthSystem

struct DocumentedField: Equatable {
    var name: String
    /// e.g. "varint32", "opt string", "list zigzag".
    var encoding: String
}

struct DocumentedKind {
    var code: UInt16
    var name: String
    var layout: UInt8
    var keys: [String]
    var fields: [DocumentedField]
    /// The fields later layouts add ("from layout 2:", "from layout 3:", in order).
    var laterFields: [DocumentedField]
}

struct FormatError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

struct FormatDocument {
    var record: DocumentedRecord
    var encodings: [String]
    var kinds: [DocumentedKind]
    var rules: [DocumentedField]
    /// The "Directory layout" block's paths, below `<StateDirectory>/`.
    var paths: [String]
    /// Every `Name.swift` the page mentions.
    var sourceFiles: [String]

    static func load() throws -> FormatDocument {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/LocalAuthLog/FORMAT.md").path
        return try FormatDocument(text: String(contentsOfFile: path, encoding: .utf8))
    }

    init(text: String) throws {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        record = try DocumentedRecord(block: Self.block(after: "## Record (", in: lines))
        // "`opt T`" names the prefix `opt`.
        encodings = try Self.table(after: "### Field encodings", in: lines).map {
            String(try Self.code($0[0]).split(separator: " ")[0])
        }
        kinds = try Self.table(after: "### Kinds", in: lines).map { cells in
            guard cells.count == 5, let code = UInt16(cells[0]), let layout = UInt8(cells[2]) else {
                throw FormatError("Kinds row \(cells)")
            }
            // "; from layout 2: ...; from layout 3: ..." (each later layout's fields, in order).
            let parts = cells[4].components(separatedBy: "; from layout ")
            var later: [DocumentedField] = []
            for (index, part) in parts.dropFirst().enumerated() {
                let prefix = "\(index + 2): "
                guard part.hasPrefix(prefix) else { throw FormatError("\(cells[1]): expected \"from layout \(index + 2):\"") }
                later += try Self.fields(String(part.dropFirst(prefix.count)))
            }
            return DocumentedKind(code: code, name: try Self.code(cells[1]), layout: layout,
                                  keys: cells[3].split(separator: " ").map(String.init).filter { $0 != "-" },
                                  fields: try Self.fields(parts[0]), laterFields: later)
        }
        sourceFiles = text.components(separatedBy: "`").enumerated().compactMap { index, part in
            index % 2 == 1 && part.hasSuffix(".swift") && !part.contains(" ") ? part : nil
        }
        paths = try Self.block(after: "## Directory layout", in: lines).compactMap { line in
            let word = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
            return word.hasPrefix("<StateDirectory>/") ? String(word.dropFirst("<StateDirectory>/".count)) : nil
        }
        rules = try Self.table(after: "The `rules` layout", in: lines).map { cells in
            DocumentedField(name: try Self.code(cells[0]), encoding: cells[1])
        }
    }

    /// "`uid` varint32, `ctx` opt ctx16" -> fields; "(none)" -> none.
    private static func fields(_ cell: String) throws -> [DocumentedField] {
        if cell == "(none)" { return [] }
        return try cell.components(separatedBy: ", ").map { part in
            let words = part.split(separator: " ", maxSplits: 1).map(String.init)
            guard words.count == 2 else { throw FormatError("field \"\(part)\"") }
            return DocumentedField(name: try code(words[0]), encoding: words[1])
        }
    }

    /// The text inside one pair of backquotes.
    private static func code(_ cell: String) throws -> String {
        guard cell.count > 2, cell.hasPrefix("`"), cell.hasSuffix("`") else { throw FormatError("expected `name`, got \(cell)") }
        return String(cell.dropFirst().dropLast())
    }

    /// The body rows (cells trimmed) of the first table after the line starting with `heading`.
    private static func table(after heading: String, in lines: [String]) throws -> [[String]] {
        guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { throw FormatError("no \"\(heading)\"") }
        guard let first = lines[start...].firstIndex(where: { $0.hasPrefix("|") }) else { throw FormatError("no table after \(heading)") }
        let rows = lines[first...].prefix { $0.hasPrefix("|") }.dropFirst(2)  // header and |---|
        return rows.map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The indented lines of the first code block after `heading`.
    private static func block(after heading: String, in lines: [String]) throws -> [String] {
        guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }),
              let first = lines[start...].firstIndex(where: { $0.hasPrefix("    ") }) else { throw FormatError("no block after \(heading)") }
        return Array(lines[first...].prefix { $0.hasPrefix("    ") })
    }
}

/// The "Record" block: `offset size field` lines, decoded as the page says.
struct DocumentedRecord {
    struct Slot { var offset: Int; var size: Int? }
    private var slots: [String: Slot] = [:]

    struct Framing {
        var seq: UInt64, time: Int64, type: UInt16, uid: UInt32?, context: String?, payload: [UInt8]
    }

    /// Each slot is named by its description's first words ("seq", "event
    /// type code", "key flags"...); "L-40" is the payload's size.
    private static let names = ["length", "CRC32C", "seq", "time", "event type code", "key flags", "uid", "context id", "payload"]

    init(block: [String]) throws {
        for line in block {
            let words = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard words.count == 3, let offset = Int(words[0]) else { continue }
            let field = words[2].trimmingCharacters(in: .whitespaces)
            guard let name = Self.names.first(where: { field.hasPrefix($0) }) else { continue }
            slots[name] = Slot(offset: offset, size: Int(words[1]))
        }
        guard slots.count == Self.names.count else { throw FormatError("Record block names \(slots.keys.sorted())") }
    }

    func decode(_ bytes: [UInt8]) throws -> Framing {
        func slot(_ name: String) -> Slot { slots[name]! }
        func unsigned(_ name: String) throws -> UInt64 {
            let s = slot(name)
            guard let size = s.size, s.offset + size <= bytes.count else { throw FormatError("\(name) beyond the record") }
            return bytes[s.offset..<s.offset + size].reversed().reduce(0) { $0 << 8 | UInt64($1) }  // little-endian
        }
        let length = Int(try unsigned("length"))
        let payloadSlot = slot("payload")
        guard slot("length").size == 4, slot("CRC32C").offset + 4 + length == bytes.count,
              length >= payloadSlot.offset - (slot("CRC32C").offset + 4) else {
            throw FormatError("length \(length) of a \(bytes.count)-byte record")
        }
        let crc = UInt32(try unsigned("CRC32C"))
        let covered = slot("CRC32C").offset + 4
        guard crc == CRC32C.checksum(Array(bytes[covered...])) else { throw FormatError("CRC32C over offsets \(covered)..<end") }
        let flags = try unsigned("key flags")
        guard flags & ~3 == 0 else { throw FormatError("key flags \(flags)") }
        let ctx = slot("context id")
        guard ctx.size == 16 else { throw FormatError("context id size") }
        let context = bytes[ctx.offset..<ctx.offset + 16].map { String(format: "%02x", $0) }.joined()  // big-endian: in order
        return Framing(seq: try unsigned("seq"), time: Int64(bitPattern: try unsigned("time")), type: UInt16(try unsigned("event type code")),
                       uid: flags & 1 != 0 ? UInt32(try unsigned("uid")) : nil, context: flags & 2 != 0 ? context : nil,
                       payload: Array(bytes[payloadSlot.offset...]))
    }
}
