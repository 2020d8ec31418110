// The hash tables' keys that skip SipHash, all in one place: the only use of
// the standard library's underscored `_rawHashValue(seed:)` hook. Set and
// Dictionary call it instead of `hash(into:)`; here it mixes the key's bits
// with the table's per-table seed (MurmurHash3's 64-bit finalizer), so two
// tables still order the same keys differently. docs/PERFORMANCE.md,
// "Hash tables keyed by context ids".

extension ContextID {
    /// SipHash guards tables against keys chosen to collide; these keys are
    /// 128 random bits the daemon draws itself (clients only name ids the
    /// daemon handed out, and lookups of other ids probe no further than the
    /// random ones stored), and every request looks its context up three times.
    public func _rawHashValue(seed: Int) -> Int {
        seededMix(high ^ low, seed: seed)
    }
}

extension UserKey {
    /// The keys are uids of local accounts: a client adds only its own (the
    /// kernel's SO_PEERCRED), an administrator others; a client cannot choose
    /// many keys, let alone colliding ones, and the seed still differs per table.
    func _rawHashValue(seed: Int) -> Int {
        seededMix(UInt64(uid), seed: seed)
    }
}

/// A key's bits mixed with the table's seed: MurmurHash3's 64-bit finalizer.
@inline(__always)
func seededMix(_ bits: UInt64, seed: Int) -> Int {
    var x = bits ^ UInt64(truncatingIfNeeded: seed)
    x = (x ^ (x >> 33)) &* 0xff51_afd7_ed55_8ccd
    x = (x ^ (x >> 33)) &* 0xc4ce_b9fe_1a85_ec53
    return Int(truncatingIfNeeded: x ^ (x >> 33))
}
