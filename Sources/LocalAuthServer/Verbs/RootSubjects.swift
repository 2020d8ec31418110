// S-52 in the server: the administrator verbs that only root may use on
// their subject (RootOnly, the core's rule), and whether this daemon's
// backends let it authenticate on behalf of users at all.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// True (and answered `permission-denied`, nothing recorded) when the
    /// caller is not root and the act on `subject` is root's alone.
    func refusedAsRootOnly(_ request: Request, _ connection: Connection.ID, subject: UserID,
                           reachesOnBehalfPrompt: Bool = false) -> Bool {
        guard let why = RootOnly.refusal(verb: request.verb, subject: subject, caller: peer(of: connection).uid,
                                         reachesOnBehalfPrompt: reachesOnBehalfPrompt) else { return false }
        counters.permissionDenied += 1
        reply(connection, request.tag, ProtocolError(.permissionDenied, why))
        return true
    }

    /// Whether `uid`'s prompt, if one waits, is an on-behalf context's (a PAM conversation).
    func promptIsOnBehalf(of uid: UserID) -> Bool {
        guard let holder = authenticator.state.user(uid).promptHolder else { return false }
        return trail.origin(of: holder) != nil
    }

    /// Why this daemon may not open on-behalf contexts now, or nil.
    var onBehalfRefusal: String? {
        RootOnly.onBehalfRefusal(biometry: authenticator.state.rules.biometryType, sensorIsSimulated: sensor.isSimulated,
                                 passcodesAreBuiltin: !(passcodes is ShadowPasscodes),
                                 allowedForTests: configuration.daemon.insecureTestBackendsForPAM)
    }

    /// `hello`'s `sensor-backend=` (S-52, PROTOCOL.md).
    var sensorBackendName: String {
        authenticator.state.rules.biometryType == .none ? "none" : sensor.name
    }

    /// `hello`'s `passcode-backend=`.
    var passcodeBackendName: String { passcodes.name }
}
