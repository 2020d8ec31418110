// S-52: administrators are not root. Only root may authenticate someone else
// (S-42), so the administrator verbs that could do it for them are root's
// alone: any act on uid 0, and a sensor reading for a PAM conversation's
// prompt. And on-behalf contexts (PAM) run only on backends that no
// administrator controls: with the simulated sensor or builtin passcodes an
// administrator decides who authenticates (`sensor`, `set-passcode`).
// Pure rules: the daemon supplies who asks, about whom, and its backends.

public enum RootOnly {
    /// Why an administrator's act on `subject` by `caller` (its SO_PEERCRED
    /// uid) is refused, or nil. `reachesOnBehalfPrompt`: the act is a sensor
    /// reading that would answer a prompt of an on-behalf context.
    public static func refusal(verb: String, subject: UserID, caller: UserID, reachesOnBehalfPrompt: Bool = false) -> String? {
        guard caller != 0 else { return nil }
        if subject == 0 {
            return "\(verb) on uid 0 is root's alone (S-52): administrators may not act on root's authentication."
        }
        if reachesOnBehalfPrompt {
            return "uid \(subject)'s prompt is a PAM conversation: only root may feed its sensor readings (S-52)."
        }
        return nil
    }

    /// Why the daemon must not open on-behalf contexts with these backends,
    /// or nil. A simulated sensor matters only when there is a sensor type
    /// (Type=none shows no biometric prompt to feed).
    public static func onBehalfRefusal(biometry: BiometryType, sensorIsSimulated: Bool, passcodesAreBuiltin: Bool,
                                       allowedForTests: Bool) -> String? {
        guard !allowedForTests else { return nil }
        let simulated = biometry != .none && sensorIsSimulated
        guard simulated || passcodesAreBuiltin else { return nil }
        let what = simulated && passcodesAreBuiltin ? "the simulated sensor and builtin passcodes"
            : simulated ? "the simulated sensor" : "builtin passcodes"
        return "localauthd does not authenticate on behalf of users (uid=, service=, tty=, rhost=) with \(what), "
            + "which administrators control (S-52): use [Biometry] Backend=fprintd (or Type=none) and "
            + "[Passcode] Backend=shadow. InsecureTestBackendsForPAM=yes is for tests only."
    }
}
