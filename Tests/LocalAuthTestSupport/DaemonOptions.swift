// How a DaemonProcess runs the daemon. The defaults are the integration
// suite's plain daemon; the reliability suite asks for a state directory of
// its own (a tiny tmpfs), another uid (setpriv), extra environment
// (libfaketime), output kept across restarts for the secret scan, a probe
// that waits out daemons that accept and then refuse, and longer safety nets;
// the client-side suites (LAContext, localauthctl) have the socket exported.

extension DaemonProcess {
    public struct Options {
        /// Appended to `--config ... --socket ... --state-dir ...`.
        public var extraArguments: [String]
        /// The state directory; nil for `state` in the daemon's temp directory.
        public var stateDirectory: String?
        /// Run the daemon as this uid (setpriv), or as the test's uid (root).
        public var runAsUID: UInt32?
        /// Extra environment for the daemon (LD_PRELOAD=libfaketime, FAKETIME=...).
        public var environment: [String: String]
        /// Append stdout/stderr at each start instead of truncating them.
        public var appendOutput: Bool
        /// Retry the readiness probe until it succeeds or the daemon exits,
        /// instead of failing on the first connection that misbehaves.
        public var patientProbe: Bool
        /// Seconds to wait for the socket, and for an exit after each signal.
        public var safetyNet: Double
        /// Once listening, point LOCALAUTHD_SOCKET at it (for the client-side
        /// suites: `LAContext()` and localauthctl then reach it unchanged).
        public var exportsSocket: Bool
        /// WATCHDOG_PID set to the daemon's own pid (a shell exports $$ and
        /// execs it), as systemd does; the systemd suite's watchdog tests.
        public var ownWatchdogPID: Bool

        public init(extraArguments: [String] = [], stateDirectory: String? = nil, runAsUID: UInt32? = nil,
                    environment: [String: String] = [:], appendOutput: Bool = false, patientProbe: Bool = false,
                    safetyNet: Double = 20, exportsSocket: Bool = false,
                    ownWatchdogPID: Bool = false) {
            self.extraArguments = extraArguments
            self.stateDirectory = stateDirectory
            self.runAsUID = runAsUID
            self.environment = environment
            self.appendOutput = appendOutput
            self.patientProbe = patientProbe
            self.safetyNet = safetyNet
            self.exportsSocket = exportsSocket
            self.ownWatchdogPID = ownWatchdogPID
        }
    }
}

extension DaemonProcess.Options {
    /// The client-side suites' daemon: the defaults, with LOCALAUTHD_SOCKET exported.
    public static var forClients: Self { Self(exportsSocket: true) }
}
