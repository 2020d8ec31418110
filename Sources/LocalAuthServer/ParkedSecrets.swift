// S-50 for requests that wait (an AdminGroup lookup, S-51; fprintd listing a
// user's fingers, S-43): a parked `set-passcode` would keep its `secret=` and
// `old-secret=` in the Request's Strings until it runs, which may be seconds
// (NSS) — and Strings cannot be wiped. The parked copy holds them as
// SecretBytes instead (wiped when the last copy of the parked request goes:
// it ran, its connection closed, the daemon stopped) and its Request holds
// empty values in their place; they are put back only for the run, which then
// holds them as briefly as a request read that moment does.
import LocalAuthProtocol
import LocalAuthSystem

struct ParkedSecrets {
    /// The keys whose values are secrets (Verb.swift: passcode, set-passcode, right-save).
    static let keys = ["secret", "old-secret"]

    private var values: [(key: String, bytes: SecretBytes)] = []

    /// Takes the secret values out of `request`, leaving empty values in
    /// their place (the keys and their order stay).
    init(takingFrom request: inout Request) {
        for key in ParkedSecrets.keys {
            guard let value = request.arguments.value(for: key) else { continue }
            values.append((key, SecretBytes(value)))
            request.arguments[key] = ""
        }
    }

    var isEmpty: Bool { values.isEmpty }

    /// `request` with the secrets put back, to run it.
    func restored(into request: Request) -> Request {
        guard !values.isEmpty else { return request }
        var request = request
        for (key, bytes) in values {
            var copy = bytes.copy()
            request.arguments[key] = String(decoding: copy, as: UTF8.self)
            SecretMemory.wipe(&copy)
        }
        return request
    }
}
