// The value syntaxes of the configuration files, after systemd's
// parse_sec / parse_size / parse_boolean. Pure functions of text, shared by
// the file parser and the daemon's command-line flags.

/// Why a value was refused: `expected` says what would have been accepted.
public struct ValueError: Error, Sendable, Equatable {
    public var expected: String

    public init(expected: String) { self.expected = expected }
}

public enum ConfigurationValue {
    /// A time span in microseconds. A bare number is seconds; units are
    /// `us usec ms msec s sec second(s) m min minute(s) h hr hour(s) d day(s)
    /// w week(s)`, with or without a space before them; components add up
    /// (`1min 30s`, `1h30min`); a decimal fraction is allowed (`1.5s`).
    public static func timeSpan(_ text: String) throws(ValueError) -> Int64 {
        let error = ValueError(expected: "a time span such as 10, 500ms, 1.5s, 2min or 1min 30s")
        var scanner = Scanner(text)
        var total: Int64 = 0
        scanner.skipSpaces()
        guard !scanner.isAtEnd else { throw error }
        while !scanner.isAtEnd {
            guard let (whole, fraction) = scanner.decimal() else { throw error }
            scanner.skipSpaces()
            let unitName = scanner.letters()
            // A number without a unit is seconds, and only as the last component.
            guard let unit = unitName.isEmpty ? (scanner.isAtEnd ? second : nil) : timeUnits[unitName] else {
                throw error
            }
            guard let part = scaled(whole, fraction, by: unit) else { throw error }
            let (sum, overflow) = total.addingReportingOverflow(part)
            guard !overflow else { throw error }
            total = sum
            scanner.skipSpaces()
        }
        return total
    }

    /// A size in bytes: a number with an optional 1024-based suffix
    /// `K M G T` (`1M` = 1048576) or `B`; a decimal fraction is allowed (`1.5K`).
    public static func size(_ text: String) throws(ValueError) -> Int {
        let error = ValueError(expected: "a size such as 8192, 64K, 1M or 2G (1024-based)")
        var scanner = Scanner(text)
        scanner.skipSpaces()
        guard let (whole, fraction) = scanner.decimal() else { throw error }
        scanner.skipSpaces()
        let suffix = scanner.letters()
        scanner.skipSpaces()
        guard scanner.isAtEnd, let unit = sizeUnits[suffix],
              let bytes = scaled(whole, fraction, by: unit), bytes <= Int64(Int.max)
        else { throw error }
        return Int(bytes)
    }

    /// `yes no true false on off 1 0` (and `y n t f`), any case.
    public static func boolean(_ text: String) throws(ValueError) -> Bool {
        switch text.lowercased() {
        case "yes", "y", "true", "t", "on", "1": return true
        case "no", "n", "false", "f", "off", "0": return false
        default: throw ValueError(expected: "a boolean: yes, no, true, false, on, off, 1 or 0")
        }
    }

    /// A decimal integer within `range`.
    public static func integer(_ text: String, in range: ClosedRange<Int>) throws(ValueError) -> Int {
        let error = ValueError(expected: "an integer from \(range.lowerBound) to \(range.upperBound)")
        // Int(_:) alone would also take a leading "+".
        guard text.utf8.first != UInt8(ascii: "+"), let value = Int(text), range.contains(value) else { throw error }
        return value
    }

    /// Space-separated words (spaces and tabs; runs count as one separator).
    public static func list(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// An absolute path: starts with `/`, holds no NUL.
    public static func absolutePath(_ text: String) throws(ValueError) -> String {
        guard text.hasPrefix("/"), !text.utf8.contains(0) else {
            throw ValueError(expected: "an absolute path starting with /")
        }
        return text
    }

    private static let second: Int64 = 1_000_000

    private static let timeUnits: [String: Int64] = {
        let minute = 60 * second, hour = 60 * minute, day = 24 * hour
        return [
            "us": 1, "usec": 1, "ms": 1000, "msec": 1000,
            "s": second, "sec": second, "second": second, "seconds": second,
            "m": minute, "min": minute, "minute": minute, "minutes": minute,
            "h": hour, "hr": hour, "hour": hour, "hours": hour,
            "d": day, "day": day, "days": day,
            "w": 7 * day, "week": 7 * day, "weeks": 7 * day,
        ]
    }()

    private static let sizeUnits: [String: Int64] = [
        "": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
    ]

    /// `whole.fraction * unit`, truncated to an integer, or nil on overflow.
    /// The fraction is exact up to 18 digits; later digits are ignored.
    private static func scaled(_ whole: Int64, _ fraction: [UInt8], by unit: Int64) -> Int64? {
        let (product, overflow) = whole.multipliedReportingOverflow(by: unit)
        guard !overflow else { return nil }
        var numerator: UInt64 = 0
        var denominator: UInt64 = 1
        for digit in fraction.prefix(18) {
            numerator = numerator * 10 + UInt64(digit)
            denominator *= 10
        }
        // unit * numerator / denominator < unit, so the quotient fits.
        let (quotient, _) = denominator.dividingFullWidth(UInt64(unit).multipliedFullWidth(by: numerator))
        let (total, overflow2) = product.addingReportingOverflow(Int64(quotient))
        return overflow2 ? nil : total
    }
}

/// A byte cursor for the value syntaxes.
private struct Scanner {
    let bytes: [UInt8]
    var index = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    var isAtEnd: Bool { index == bytes.count }

    mutating func skipSpaces() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
    }

    /// Digits, optionally `.` and more digits; nil if there is no digit or it overflows.
    mutating func decimal() -> (Int64, [UInt8])? {
        var whole: Int64 = 0
        var sawDigit = false
        while index < bytes.count, let d = digit(bytes[index]) {
            let (times10, o1) = whole.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(d))
            guard !o1, !o2 else { return nil }
            whole = sum
            sawDigit = true
            index += 1
        }
        var fraction: [UInt8] = []
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, let d = digit(bytes[index]) {
                fraction.append(d)
                index += 1
            }
            sawDigit = sawDigit || !fraction.isEmpty
        }
        return sawDigit ? (whole, fraction) : nil
    }

    mutating func letters() -> String {
        let start = index
        while index < bytes.count, (bytes[index] | 0x20) >= UInt8(ascii: "a") && (bytes[index] | 0x20) <= UInt8(ascii: "z") {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func digit(_ b: UInt8) -> UInt8? {
        b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") ? b - UInt8(ascii: "0") : nil
    }
}
