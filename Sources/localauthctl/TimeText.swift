// Times as auditors read and write them: RFC 3339 UTC with microseconds
// (`2026-11-29T10:42:00.000000Z`) out; RFC 3339 (any offset, fraction
// optional; no offset means UTC), `now`, or a journalctl-style relative time
// (`-1h`, `-30min`, `-1d12h`) in. Civil-date arithmetic after Howard
// Hinnant's days_from_civil, so no Foundation; only `today`/`yesterday`
// ask the C library for the local time zone, as journalctl does.

import Glibc

enum TimeText {
    static let second: Int64 = 1_000_000

    /// RFC 3339 UTC with six fraction digits.
    static func format(_ micros: Int64) -> String {
        var seconds = micros / second
        var fraction = micros % second
        if fraction < 0 {
            fraction += second
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 6))Z"
    }

    /// journalctl's spellings (systemd.time(7)): RFC 3339, `now`, `today`,
    /// `yesterday`, `tomorrow` (midnight in local time), `-1h`/`+1h`,
    /// `1h ago`, and a bare span (`1h`: that long ago, as `--since 1h` reads).
    static func parse(_ text: String, now: Int64) -> Int64? {
        switch text {
        case "now": return now
        case "today": return localMidnight(now, days: 0)
        case "yesterday": return localMidnight(now, days: -1)
        case "tomorrow": return localMidnight(now, days: 1)
        default: break
        }
        if let first = text.first, first == "-" || first == "+" {
            guard let span = parseSpan(text.dropFirst()) else { return nil }
            return first == "-" ? now - span : now + span
        }
        if text.hasSuffix(" ago") {
            guard let span = parseSpan(Substring(text.dropLast(4).filter { $0 != " " })) else { return nil }
            return now - span
        }
        if let time = parseRFC3339(text) { return time }
        return parseSpan(text[...]).map { now - $0 }
    }

    /// Local midnight `days` from the day of `micros` (the machine's time zone).
    static func localMidnight(_ micros: Int64, days: Int) -> Int64? {
        var seconds = time_t(micros / second)
        var civil = tm()
        guard localtime_r(&seconds, &civil) != nil else { return nil }
        civil.tm_hour = 0
        civil.tm_min = 0
        civil.tm_sec = 0
        civil.tm_mday += Int32(days)
        civil.tm_isdst = -1
        let midnight = mktime(&civil)
        guard midnight != -1 else { return nil }
        return Int64(midnight) * second
    }

    /// `1h30min`, `90s`, `2d`: a sum of number+unit parts (a bare number is seconds).
    static func parseSpan(_ text: Substring) -> Int64? {
        let units: [(String, Int64)] = [
            ("us", 1), ("usec", 1), ("ms", 1000), ("msec", 1000), ("s", second), ("sec", second),
            ("second", second), ("seconds", second), ("m", 60 * second), ("min", 60 * second),
            ("minute", 60 * second), ("minutes", 60 * second), ("h", 3600 * second), ("hr", 3600 * second),
            ("hour", 3600 * second), ("hours", 3600 * second), ("d", 86_400 * second), ("day", 86_400 * second),
            ("days", 86_400 * second), ("w", 604_800 * second), ("week", 604_800 * second),
            ("weeks", 604_800 * second),
        ]
        var rest = text[...]
        var total: Int64 = 0
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let number = Int64(digits), number < 1 << 40 else { return nil }
            rest = rest.dropFirst(digits.count)
            let unitText = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unitText.count)
            let multiplier: Int64
            if unitText.isEmpty {
                guard rest.isEmpty else { return nil }
                multiplier = second
            } else {
                guard let unit = units.first(where: { $0.0 == unitText }) else { return nil }
                multiplier = unit.1
            }
            let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
            guard !overflow else { return nil }
            total += product
        }
        return total
    }

    /// `YYYY-MM-DD[(T|t| )HH:MM[:SS[.frac]]][Z|z|±HH:MM]`.
    static func parseRFC3339(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for b in bytes[index..<index + count] {
                guard b >= 48 && b <= 57 else { return nil }
                value = value * 10 + Int64(b - 48)
            }
            index += count
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard index < bytes.count, bytes[index] == c.asciiValue! else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day) else { return nil }
        var seconds: Int64 = 0
        var micros: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: "t") || bytes[index] == UInt8(ascii: " ") {
            index += 1
            guard let hour = number(2), expect(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
            seconds = hour * 3600 + minute * 60
            if expect(":") {
                guard let sec = number(2), sec <= 60 else { return nil }
                seconds += sec
                if expect(".") {
                    var digits = 0
                    while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                        if digits < 6 { micros = micros * 10 + Int64(bytes[index] - 48) }
                        digits += 1
                        index += 1
                    }
                    guard digits > 0 else { return nil }
                    for _ in 0..<max(0, 6 - digits) { micros *= 10 }
                }
            }
        }
        var offset: Int64 = 0
        if index < bytes.count {
            if expect("Z") || expect("z") {
            } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign: Int64 = bytes[index] == UInt8(ascii: "+") ? 1 : -1
                index += 1
                guard let hours = number(2), expect(":"), let minutes = number(2) else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            } else {
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 86_400) + seconds - offset) * second + micros
    }

    /// 28...31: February 30 is no date (not March 2, as the arithmetic below would make it).
    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
