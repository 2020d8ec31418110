// Systemd: the service manager's side channels through libsystemd —
// readiness and status (sd_notify), socket activation (LISTEN_FDS), the
// watchdog interval, and the boot id. All work, and report "not under
// systemd", when no systemd is present.
import CSystemd
import Glibc

public enum Systemd {
    /// sd_notify(0, state), e.g. "READY=1" or "STATUS=...\nWATCHDOG=1".
    /// Returns true when sent, false when there is no NOTIFY_SOCKET.
    @discardableResult
    public static func notify(_ state: String) throws(SystemError) -> Bool {
        let rc = sd_notify(0, state)
        if rc < 0 { throw SystemError(call: "sd_notify", errno: -rc) }
        return rc > 0
    }

    /// The sockets systemd passed (socket activation) with their
    /// FileDescriptorName=; the LISTEN_* variables are unset afterwards.
    /// Empty when not socket-activated.
    public static func listenFDs() throws(SystemError) -> [(fd: Int32, name: String)] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        if count < 0 { throw SystemError(call: "sd_listen_fds_with_names", errno: -count) }
        defer {
            if let names {
                for i in 0..<Int(count) { free(names[i]) }
                free(names)
            }
        }
        return (0..<Int(count)).map { i in
            let name = names?[i].map { String(cString: $0) } ?? "unknown"
            return (fd: SD_LISTEN_FDS_START + Int32(i), name: name)
        }
    }

    /// WatchdogSec= in microseconds when the watchdog is on for this process
    /// (ping with notify("WATCHDOG=1") at half of it), else nil.
    public static func watchdogInterval() -> UInt64? {
        var micros: UInt64 = 0
        return sd_watchdog_enabled(0, &micros) > 0 ? micros : nil
    }

    /// This boot's id: 32 lowercase hex digits.
    public static func bootID() throws(SystemError) -> String {
        var id = sd_id128_t()
        let rc = sd_id128_get_boot(&id)
        if rc < 0 { throw SystemError(call: "sd_id128_get_boot", errno: -rc) }
        return withUnsafeBytes(of: id.bytes) { Hex.encode($0) }
    }
}
