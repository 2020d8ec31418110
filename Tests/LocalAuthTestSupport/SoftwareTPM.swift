// SoftwareTPM: swtpm, a software TPM 2.0, as the test's own child process,
// for the TPM path of the daemon's key (decision 0013). systemd-creds
// reaches it through the TCTI spec `swtpm:port=P` (libtss2-tcti-swtpm),
// which sends commands to P and sets the locality through swtpm's control
// channel on P+1, so both are TCP on loopback. Each instance keeps the
// TPM's state (its seeds) in a temp directory of its own: a second
// instance is another chip. `restart()` starts swtpm again on the same
// state, as a reboot restarts the chip. The ports are ones the kernel had
// free; if another process takes one before swtpm binds it, swtpm exits
// and the start is tried on others. Timeouts are safety nets only.
import Foundation
import Glibc

public final class SoftwareTPM {
    public static let swtpm = "/usr/bin/swtpm"
    public static let systemdCreds = "/usr/bin/systemd-creds"

    /// What is missing for the TPM path's tests, or nil when they can run:
    /// the programs, and the TSS libraries systemd-creds loads for a TPM
    /// (systemd only suggests them; scripts/install-deps installs them).
    public static var missing: String? {
        for program in [swtpm, systemdCreds] where access(program, X_OK) != 0 {
            return "\(program) is not installed (Debian: swtpm, systemd)"
        }
        for library in ["libtss2-esys.so.0", "libtss2-rc.so.0", "libtss2-mu.so.0", "libtss2-tcti-swtpm.so.0"] {
            guard let handle = dlopen(library, RTLD_LAZY) else {
                return "systemd-creds cannot reach a TPM without \(library) (Debian: libtss2-esys-3.0.2-0, libtss2-rc0, "
                    + "libtss2-mu0, libtss2-tcti-swtpm0)"
            }
            dlclose(handle)
        }
        return nil
    }

    public let state: TemporaryDirectory
    public private(set) var port: UInt16 = 0
    public private(set) var pid: pid_t?

    /// The TCTI spec: `systemd-creds --tpm2-device=`, `SYSTEMD_TPM2_DEVICE=`.
    public var device: String { "swtpm:port=\(port)" }

    public init() throws {
        state = TemporaryDirectory(prefix: "localauth-swtpm-")
        guard mkdir(state.path + "/tpm", 0o700) == 0 else { throw HarnessError("mkdir \(state.path)/tpm") }
        try start()
    }

    /// Starts swtpm on this instance's state; returns once both ports accept.
    public func start() throws {
        precondition(pid == nil, "swtpm already running")
        for _ in 0..<8 {
            let port = try Self.freePortPair()
            let child = try spawn(Self.swtpm, [
                "socket", "--tpm2", "--tpmstate", "dir=\(state.path)/tpm", "--flags", "startup-clear",
                "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
            ], stderrPath: state.path + "/stderr", appendOutput: true)
            var exited = false
            let ready = waitUntil {
                exited = waitForExit(child, timeout: 0) != nil
                return exited || (Self.accepts(port) && Self.accepts(port + 1))
            }
            if ready, !exited {
                pid = child
                self.port = port
                return
            }
            if !exited {
                Glibc.kill(child, SIGKILL)
                _ = waitForExit(child, timeout: 10)
            }
        }
        throw HarnessError("swtpm did not start; its stderr:\n\(readText(state.path + "/stderr").suffix(2000))")
    }

    /// SIGTERM (SIGKILL after the safety net) and the exit reaped.
    public func stop() {
        guard let pid else { return }
        Glibc.kill(pid, SIGTERM)
        if waitForExit(pid, timeout: 10) == nil {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 10)
        }
        self.pid = nil
    }

    /// The chip again on the same state (a reboot), on whatever ports are free.
    public func restart() throws {
        stop()
        try start()
    }

    /// `systemd-creds encrypt --with-key=tpm2` into this TPM: `plaintext`
    /// sealed as the credential `name` in the file `credential`.
    public func seal(_ plaintext: String, name: String, into credential: String) throws {
        let (status, _, err) = try runToCompletion(Self.systemdCreds, [
            "encrypt", "--with-key=tpm2", "--tpm2-device=\(device)", "--name=\(name)", plaintext, credential])
        guard status == 0 else { throw HarnessError("systemd-creds encrypt exited with \(status): \(err)") }
    }

    /// `systemd-creds decrypt` of `credential` into `output`, with this TPM as
    /// the machine's (SYSTEMD_TPM2_DEVICE): its exit status and stderr.
    public func unseal(_ credential: String, name: String, to output: String) throws -> (status: Int32, stderr: String) {
        let (status, _, err) = try runToCompletion(Self.systemdCreds, ["decrypt", "--name=\(name)", credential, output],
                                                   environment: ["SYSTEMD_TPM2_DEVICE": device])
        return (status, err)
    }

    deinit { stop() }

    /// A port the kernel had free whose successor was free too.
    private static func freePortPair() throws -> UInt16 {
        for _ in 0..<32 {
            let first = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(first) }
            guard first >= 0, bind(first, port: 0) else { continue }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(first, $0, &length) }
            }
            let port = UInt16(bigEndian: address.sin_port)
            guard named == 0, port < UInt16.max else { continue }
            let second = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(second) }
            if second >= 0, bind(second, port: port + 1) { return port }
        }
        throw HarnessError("no two consecutive free TCP ports on 127.0.0.1")
    }

    private static func bind(_ fd: Int32, port: UInt16) -> Bool {
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }
}
