// The one escaping of text that localauthctl prints (issue 27 item 10).
// A user's reason, titles, a PAM service or rhost, fprintd's finger names,
// the daemon's messages and the names of files in a state directory reach
// root's terminal through `log`, `status`, `replay`, `verify` and the rest.
// Raw, a C1 control (U+009B is CSI, U+009D OSC) or a C0 one (ESC) can erase
// the lines above and set the window title, and a bidi control can make a
// line read as something it is not. Every such code point is written as
// `\uXXXX`, JSON's escape: in JSON strings (JSONValue), in the short and
// verbose formats (a value holding one is JSON-quoted), and, as the net
// under everything else, by Console on every line it writes, keeping only
// the line feeds that end localauthctl's own lines.

enum DisplayText {
    /// Whether a code point must never reach a terminal raw: every C0
    /// control, DEL, every C1 control, the Unicode bidi controls (ALM, LRM,
    /// RLM, LRE..RLO, LRI..PDI) and the line and paragraph separators.
    static func mustEscape(_ value: UInt32) -> Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }

    /// `\u` and four lowercase hex digits (every code point above escapes in four).
    static func appendEscape(_ value: UInt32, to out: inout String) {
        let hex = String(value, radix: 16)
        out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// A value for a table or a `key=value` line: as it is, or JSON-quoted
    /// (escaped) when it holds a control, so that it cannot end the line.
    static func field(_ text: String) -> String {
        text.unicodeScalars.contains { mustEscape($0.value) } ? JSONValue.string(text).text : text
    }

    /// `text` with every code point `mustEscape` names escaped, except line
    /// feeds when `keepingLineFeeds` (localauthctl's own line ends).
    static func escaped(_ text: String, keepingLineFeeds: Bool) -> String {
        // Most output is printable ASCII: one pass over the bytes decides.
        let clean = text.utf8.allSatisfy { byte in
            (byte >= 0x20 && byte < 0x7F) || (byte == 0x0A && keepingLineFeeds)
        }
        if clean { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if mustEscape(scalar.value), !(keepingLineFeeds && scalar == "\n") {
                appendEscape(scalar.value, to: &out)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
