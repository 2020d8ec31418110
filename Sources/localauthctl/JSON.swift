// Hand-written JSON for `-o json`: one object per line, keys in the order
// given (AUDIT.md's order), strings escaped per RFC 8259, and every code
// point DisplayText names (C1 and bidi controls too) as `\uXXXX`.

enum JSONValue {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func number<T: BinaryInteger>(_ value: T) -> JSONValue { .int(Int64(value)) }
    static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// Compact text: `{"a":1,"b":"x"}`.
    var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    func write(into out: inout String) {
        switch self {
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .int(let n): out += String(n)
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (i, (key, value)) in pairs.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    /// Indented text, two spaces per level, for `replay -o json`.
    func pretty(indent: String = "") -> String {
        switch self {
        case .object(let pairs) where !pairs.isEmpty:
            let inner = indent + "  "
            let body = pairs.map { key, value in
                inner + JSONValue.string(key).text + ": " + value.pretty(indent: inner)
            }
            return "{\n" + body.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return text
        }
    }

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if DisplayText.mustEscape(scalar.value) {
                    DisplayText.appendEscape(scalar.value, to: &out)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
