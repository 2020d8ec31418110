// The rules' bytes inside rules-applied (AUDIT.md) and the state snapshot
// (StateCodec): the daemon's policy, field by field in a fixed order; a
// field added here is a new layout of both.
enum RulesCodec {
    static func encode(_ rules: Rules, into w: inout ByteWriter) {
        w.int(rules.biometryType.rawValue)
        w.optional(rules.attemptsPerEvaluationOverride) { $0.int($1) }
        w.int(rules.lockoutThreshold)
        w.svarint(rules.promptTimeout)
        w.svarint(rules.passcodeRequiredAfter)
        w.bool(rules.passcodeRequiredAfterBoot)
        w.int(rules.delayAfterFailures)
        w.varint(UInt64(rules.backoff.count))
        for delay in rules.backoff { w.svarint(delay) }
        w.int(rules.maxPasscodeFailures)
    }

    static func decode(_ r: inout ByteReader) throws -> Rules {
        let biometry = try raw(BiometryType.init(rawValue:), try r.int())
        let attempts = try r.optional { try $0.int(in: 1...1_000_000) }
        let threshold = try r.int(in: 1...1_000_000)
        let timeout = try r.svarint()
        let requiredAfter = try r.svarint()
        let requiredAfterBoot = try r.bool()
        let delayAfter = try r.int(in: 0...1_000_000)
        let count = try r.varint()
        guard count <= 64 else { throw DecodeError("implausible backoff list of \(count)") }
        var backoff: [Int64] = []
        for _ in 0..<count { backoff.append(try r.svarint()) }
        let maxFailures = try r.int(in: 0...1_000_000)
        return Rules(biometryType: biometry, attemptsPerEvaluationOverride: attempts, lockoutThreshold: threshold,
                     promptTimeout: timeout, passcodeRequiredAfter: requiredAfter,
                     passcodeRequiredAfterBoot: requiredAfterBoot, delayAfterFailures: delayAfter,
                     backoff: backoff, maxPasscodeFailures: maxFailures)
    }
}
