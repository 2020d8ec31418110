// Fuzz target for the event and state codecs and the replay fold
// (FuzzProperty.swift says who calls it).
//
// First byte even: the input is a stream of records, each
//   kind (1 byte: below 250, modulo one more than the number of kinds, so
//   every kind's code and 0; 250 and up, unknown codes),
//   time step (1 byte; 0xFF = 8 raw bytes of absolute time follow),
//   length (1 byte), payload (length bytes).
// Each payload goes through EventCodec.decode as a replay would; a decoded
// event must round-trip (decode(encode(body)) == body) and is folded into one
// AuthState (what StateLoader does at start). At the end the derived facts
// (status, retry-after, next deadline) are computed for every user and the
// state must round-trip through StateCodec.
// First byte odd: the rest is a snapshot payload for StateCodec.decode; a
// decoded state must round-trip and answer status for every user.
// Traps (overflow, precondition, bad index) are what libFuzzer reports.
//
// Known bug (docs/RELIABILITY.md, F-1): `prompt-shown` for a context that is
// not in the state puts it in `prompting`, and StateCodec then cannot decode
// its own encoding. With LOCALAUTH_FUZZ_KNOWN_BUGS=1 in the environment such
// states are not round-tripped, so that fuzzing can look for other bugs.
import Glibc
import LocalAuthCore

private let toleratesKnownBugs = getenv("LOCALAUTH_FUZZ_KNOWN_BUGS") != nil
/// Kind bytes map onto 0...33 (0 is no kind): a new kind is fuzzed once it exists.
private let kindCodes = UInt8(EventKind.allCases.count + 1)

public func codecFuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let mode = input.first else { return 0 }
    if mode & 1 == 1 {
        let payload = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[1...]))
        guard let state = try? StateCodec.decode(payload) else { return 0 }
        checkState(state)
        return 0
    }
    var state = AuthState()
    var time: Int64 = 1_750_000_000_000_000
    var offset = 1
    while offset + 3 <= input.count {
        let kindByte = input[offset]
        let step = input[offset + 1]
        offset += 2
        if step == 0xFF {
            guard offset + 8 <= input.count else { return 0 }
            var raw: UInt64 = 0
            for i in 0..<8 { raw = raw << 8 | UInt64(input[offset + i]) }
            time = Int64(bitPattern: raw)
            offset += 8
        } else {
            time = time &+ Int64(step) * 1_000_000
        }
        guard offset < input.count else { return 0 }
        let length = Int(input[offset])
        offset += 1
        let end = min(offset + length, input.count)
        let payload = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[offset..<end]))
        offset = end
        let code = kindByte < 250 ? UInt16(kindByte % kindCodes) : UInt16(kindByte) << 4
        guard let body = try? EventCodec.decode(kind: code, payload: payload) else { continue }
        let again = try? EventCodec.decode(kind: code, payload: EventCodec.encode(body))
        require(again == body, "event round trip changed \(body) into \(String(describing: again))")
        require(body.kind.rawValue == code, "decoded a different kind")
        state.apply(Event(time: time, body))
    }
    checkState(state)
    return 0
}

private func checkState(_ state: AuthState) {
    let now: Int64 = 1_750_000_000_000_000
    for uid in state.users.keys {
        _ = state.status(uid, now: now)
        _ = state.passcodeAttemptsLeft(uid)
        _ = state.biometryUnusable(uid, now: now)
        _ = state.passcodeRetryAfter(uid, now: .min)
        _ = state.passcodeRetryAfter(uid, now: .max)
    }
    _ = state.nextPromptDeadline
    if toleratesKnownBugs, !state.prompting.isSubset(of: Set(state.contexts.keys)) { return }
    let bytes = StateCodec.encode(state)
    let again = try? StateCodec.decode(bytes)
    require(again == state, "state round trip changed the state")
}
