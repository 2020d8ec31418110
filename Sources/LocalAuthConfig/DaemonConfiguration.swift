// The daemon's configuration: every key of PROTOCOL.md's sample file, with
// its default. Fields are `var` so the daemon can apply command-line flags
// after the files. Times are microseconds, as in LocalAuthCore.

import LocalAuthCore

/// `[Biometry] Backend=`: where sensor readings come from. New backends
/// (fprintd) are new cases; the raw value is the configuration spelling.
public enum BiometryBackend: String, Sendable, CaseIterable, Hashable {
    /// Readings come from the admin `sensor` verb.
    case simulated
    /// A fingerprint reader through fprintd over D-Bus (S-43).
    case fprintd
}

/// `[Passcode] Backend=`.
public enum PasscodeBackend: String, Sendable, CaseIterable, Hashable {
    /// yescrypt hashes in the state directory.
    case builtin
    /// Login passwords: the hashes of `ShadowFile=`, read-only (S-44).
    case shadow
}

/// `[Passcode] ClientPrompts=`: under a login-password backend, who besides
/// the PAM conversation may take passcode prompts (S-44, S-68).
public enum ClientPrompts: String, Sendable, CaseIterable, Hashable {
    /// The PAM conversation alone.
    case no
    /// The PAM conversation and session agents (S-68): the default.
    case agent
    /// Any client.
    case yes
}

public struct DaemonConfiguration: Sendable, Equatable {
    /// `[Daemon]`
    public struct Daemon: Sendable, Equatable {
        public var socket = "/run/localauthd/socket"
        public var stateDirectory = "/var/lib/localauthd"
        /// nil: no admin group (only root is admin).
        public var adminGroup: String? = nil
        /// `AuditGroup=`: a group whose members may read the event log
        /// (log, replay, verify) without administering; nil = none. The
        /// members of `adminGroup` may read it too.
        public var auditGroup: String? = nil
        public var maxConnections = 4096
        public var maxConnectionsPerUser = 256
        public var maxContextsPerConnection = 64
        public var maxPendingBytes = 1 << 20
        /// Microseconds a started line may take to finish.
        public var idleLineTimeout: Int64 = 10 * Timestamp.second
        /// S-83: microseconds with nothing to do after which a socket-activated
        /// daemon exits (the socket starts it again); 0 = never.
        public var exitOnIdle: Int64 = 60 * Timestamp.second
        /// S-48: bytes of each stored string a client sends (a property's
        /// value, evaluate's `reason=`), of a context's string properties
        /// together, and of all the string properties an unprivileged user
        /// holds across their contexts and connections.
        public var maxPropertyBytes = 512
        public var maxPropertyBytesPerContext = 1 << 10
        public var maxPropertyBytesPerUser = 256 << 10
        /// S-52: on-behalf contexts (PAM) on the simulated sensor or builtin
        /// passcodes, which administrators control. Tests only.
        public var insecureTestBackendsForPAM = false
    }

    /// `[Biometry]`
    public struct Biometry: Sendable, Equatable {
        public var type = BiometryType.touchID
        public var backend = BiometryBackend.simulated
        /// nil: by type (3 for touchID, 2 for faceID and opticID).
        public var attemptsPerEvaluation: Int? = nil
        public var lockoutThreshold = 5
        /// Microseconds.
        public var promptTimeout: Int64 = 60 * Timestamp.second
        /// Microseconds; 0 = off.
        public var passcodeRequiredAfter: Int64 = 0
        public var passcodeRequiredAfterBoot = false
        /// `FprintdBus=`: a D-Bus address for fprintd; nil = the system bus.
        public var fprintdBus: String? = nil
        /// S-61: no biometry for a client that is remote (rhost, logind's Remote).
        public var skipRemote = true
        /// S-62: the reader is inaccessible while logind reports the lid
        /// closed and the machine docked (or the reader built in, below).
        public var lidClosedInaccessible = true
        /// S-62: readers (fprintd's device names, or `*`) built into the lid
        /// or palm rest: inaccessible whenever the lid is closed, docked or not.
        public var builtInReaders: [String] = []
        /// S-63: PrepareForSleep(true) ends every biometric prompt.
        public var cancelOnSuspend = true
        /// `LogindBus=`: a D-Bus address for logind; nil = the system bus.
        public var logindBus: String? = nil
    }

    /// `[Passcode]`
    public struct Passcode: Sendable, Equatable {
        public var backend = PasscodeBackend.builtin
        /// `ShadowFile=`, read by the shadow backend (S-44).
        public var shadowFile = "/etc/shadow"
        /// `ClientPrompts=`: with the shadow backend, who besides on-behalf
        /// contexts may take passcode prompts (S-44, S-68).
        public var clientPrompts = ClientPrompts.agent
        public var delayAfterFailures = 6
        /// Microseconds each; the last one repeats.
        public var backoff: [Int64] = [60, 300, 900, 3600].map { $0 * Timestamp.second }
        /// 0 = no limit.
        public var maxPasscodeFailures = 0
    }

    /// `[Log]`
    public struct Log: Sendable, Equatable {
        /// Bytes.
        public var segmentSize = 64 << 20
        /// Events between snapshots.
        public var snapshotEvery = 100_000
        /// S-48: logged events per second an unprivileged user may cause
        /// (0 = no limit), and how many may come at once (the bucket's size).
        public var userEventRate = 20
        public var userEventBurst = 200
        /// S-48: bytes kept free on the log's file system for security
        /// events, administrators and daemon starts and stops (0 = none).
        public var reserveSpace = 64 << 20
    }

    /// `[Secrets]` (PROTOCOL.md v1.1): LARight's secrets.
    public struct Secrets: Sendable, Equatable {
        /// The key file; nil: `$CREDENTIALS_DIRECTORY/localauthd.key` when
        /// present, else `STATE/secrets.key` (created if absent).
        public var keyFile: String? = nil
        public var maxSecretBytes = 4096
        public var maxRightsPerUser = 64
    }

    /// `[DBus]` (S-70): the D-Bus API on the system bus.
    public struct DBus: Sendable, Equatable {
        /// `Serve=`: own io.github.localauthd.LocalAuthentication1 and serve it.
        public var serve = true
        /// `Bus=`: a D-Bus address; nil = the system bus.
        public var bus: String? = nil
    }

    /// `[Keyring]` (S-74..S-77): the login password kept for the keyring.
    public struct Keyring: Sendable, Equatable {
        /// `ReleaseLoginPassword=`: seal the login password at a password
        /// sign-in through a listed service, and release it to root's PAM
        /// module after a fingerprint one. Only under `[Passcode] Backend=shadow`.
        public var releaseLoginPassword = false
        /// `Services=`: the PAM services whose sign-ins seal and receive it.
        public var services = Keyring.defaultServices

        public static let defaultServices = ["login", "gdm-password", "gdm-fingerprint", "sddm", "lightdm", "greetd"]
    }

    public var daemon = Daemon()
    public var biometry = Biometry()
    public var passcode = Passcode()
    public var log = Log()
    public var secrets = Secrets()
    public var dbus = DBus()
    public var keyring = Keyring()

    public init() {}

    /// PROTOCOL.md's defaults.
    public static let `default` = DaemonConfiguration()

    /// The values the core's rules are judged with.
    public var rules: Rules {
        Rules(
            biometryType: biometry.type,
            attemptsPerEvaluationOverride: biometry.attemptsPerEvaluation,
            lockoutThreshold: biometry.lockoutThreshold,
            promptTimeout: biometry.promptTimeout,
            passcodeRequiredAfter: biometry.passcodeRequiredAfter,
            passcodeRequiredAfterBoot: biometry.passcodeRequiredAfterBoot,
            delayAfterFailures: passcode.delayAfterFailures,
            backoff: passcode.backoff,
            maxPasscodeFailures: passcode.maxPasscodeFailures
        )
    }
}
