// `[Passcode] Backend=shadow` (S-44): a user's passcode is their login
// password, checked with libxcrypt against the hash in `ShadowFile=`. The
// file belongs to passwd(1): set-passcode and clear-passcode are refused,
// and the daemon follows the file instead. A thread of its own waits for
// inotify to say the file changed (no polling, S-82; where inotify cannot
// watch its directory, it looks once a second) and re-reads it when its
// stamp (inode, size, mtime, ctime) changed, then wakes the loop (`scanned`),
// which takes the scan's verdicts (who has a usable hash) and records a `passcode-changed`
// by the daemon for every difference, so the core's `passcodeSet` (and any
// replay of the log) follows the file (S-38). Each check reads the hash
// afresh on the worker, so a password changed with passwd counts from the
// next check on.
import Glibc
import LocalAuthConfig
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem
import Synchronization

final class ShadowPasscodes: PasscodeStore {
    let name = "shadow"
    let path: String
    /// Loop-confined: the uids the core has been told have a passcode.
    private var usable: Set<UserID>
    private let scanner: ShadowScanner

    /// Reads the file once, at start-up (before READY): an unreadable file
    /// stops the daemon, with the fix in the message (fail closed, S-41).
    init(path: String) throws {
        self.path = path
        scanner = try ShadowScanner(path: path)
        guard let first = scanner.scanNow() else {
            throw StoreError("cannot read the shadow file \(path) (\(scanner.lastProblem ?? "unknown error")); "
                + "with [Passcode] Backend=shadow the unit needs SupplementaryGroups=shadow (scripts/install writes that drop-in)")
        }
        usable = first
        try scanner.start()
    }

    func isSet(_ uid: UserID) -> Bool { usable.contains(uid) }
    /// Moves whenever the scanner read a changed file (S-76).
    var fileGeneration: UInt64 { scanner.generation }
    var users: [UserID] { Array(usable) }

    func checker(for uid: UserID) -> @Sendable ([UInt8]) -> Bool {
        let path = self.path
        return { secret in
            // NSS and the file are read here, on the worker, at check time.
            guard let name = (try? Accounts.user(uid: uid))??.name,
                  let hash = (try? ShadowFile.withContents(path, { ShadowFile.hash(for: name, in: $0) })) ?? nil,
                  ShadowFile.isUsable(hash)
            else { return false }
            return Yescrypt.verify(secret: secret, hash: hash)
        }
    }

    let recordMaker: @Sendable ([UInt8]) throws -> String = { _ in throw ShadowPasscodes.changeRefused }

    func commit(_ record: String?, for uid: UserID) throws { throw ShadowPasscodes.changeRefused }

    static let changeRefused = StoreError("login passwords are changed with passwd, not through localauthd")

    /// Posted when a scan found a new verdict (the loop then calls `changes`).
    var scanned: EventFD { scanner.wake }

    /// On the loop, once `scanned` woke it (the shell drained it): what
    /// changed since the last call.
    func changes() -> [(uid: UserID, set: Bool)] {
        guard let latest = scanner.takeResult() else { return [] }
        let added = latest.subtracting(usable).sorted().map { (uid: $0, set: true) }
        let removed = usable.subtracting(latest).sorted().map { (uid: $0, set: false) }
        usable = latest
        return added + removed
    }
}

/// Reads the shadow file off the loop and keeps the newest verdict.
final class ShadowScanner: Sendable {
    private struct Stamp: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        var modified: Int64, changed: Int64
    }

    private struct State {
        var stamp: Stamp?
        var result: Set<UserID>?
        var problem: String?
        var reportedProblem: String?
        /// How many times the file was read with a new stamp (S-76 checks
        /// the login secret's copies again when it moves).
        var generation: UInt64 = 0
    }

    let path: String
    private let state = Mutex(State())
    /// Posted when `result` holds a new verdict.
    let wake: EventFD
    /// The file's directory under inotify; nil: it could not be watched.
    private let watch: FileWatch?

    /// The watch starts before the first scan (`scanNow`), so that no
    /// change after that scan is missed.
    init(path: String) throws {
        self.path = path
        wake = try EventFD()
        do {
            watch = try FileWatch(file: path)
        } catch {
            watch = nil
            DaemonLog.notice("Cannot watch \(path) for changes (\(error)); looking at it once a second instead.")
        }
    }

    var lastProblem: String? { state.withLock { $0.problem } }

    var generation: UInt64 { state.withLock { $0.generation } }

    /// Starts the thread that waits for changes (after the first scan).
    func start() throws {
        var handle = pthread_t()
        let started = pthread_create(&handle, nil, { argument in
            Unmanaged<ShadowScanner>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, Unmanaged.passRetained(self).toOpaque())
        guard started == 0 else { throw SystemError(call: "pthread_create", errno: started) }
        pthread_detach(handle)
    }

    /// Blocks until the file may have changed, scans it, tells the loop.
    /// Not optimized: this loop never exits, and Swift 6.3's loop-invariant
    /// code motion does not finish on it once the scan is inlined (a release
    /// build of LocalAuthServer ran for over 12 CPU minutes inside
    /// `LoopInvariantCodeMotion` on this function, gdb; 1.5 minutes for the
    /// whole module without it). The thread wakes once per change of a file,
    /// so nothing here is worth optimizing; its callees still are.
    @_optimize(none)
    private func run() {
        while true {
            if let watch {
                guard watch.waitForChange() else { continue }
            } else {
                sleep(1)
            }
            guard let result = scanIfChanged() else { continue }
            state.withLock { $0.result = result }
            try? wake.post()
        }
    }

    func takeResult() -> Set<UserID>? {
        state.withLock { s in
            defer { s.result = nil }
            return s.result
        }
    }

    /// Synchronous scan (start-up); nil when the file cannot be read.
    func scanNow() -> Set<UserID>? {
        state.withLock { $0.stamp = nil }
        return scanIfChanged()
    }

    /// The uids with a usable hash, or nil when the file is unchanged or
    /// unreadable (then the previous verdict stands and the journal says why, once).
    private func scanIfChanged() -> Set<UserID>? {
        var info = stat()
        guard stat(path, &info) == 0 else { return fail("stat: \(String(cString: strerror(errno)))") }
        let stamp = Stamp(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                          modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                          changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
        if state.withLock({ $0.stamp == stamp }) { return nil }
        let entries: [String: Bool]
        do {
            entries = try ShadowFile.withContents(path) { ShadowFile.usability($0) }
        } catch {
            return fail("\(error)")
        }
        var uids = Set<UserID>()
        for (name, usable) in entries where usable {
            // The checker finds the hash through getpwuid_r's name: count a
            // uid only under that (its canonical) name, so both agree.
            guard let uid = (try? Accounts.uid(named: name)) ?? nil,
                  (try? Accounts.user(uid: uid))??.name == name else { continue }
            uids.insert(uid)
        }
        state.withLock { s in
            s.stamp = stamp
            s.problem = nil
            s.reportedProblem = nil
            s.generation += 1
        }
        return uids
    }

    private func fail(_ problem: String) -> Set<UserID>? {
        let report = state.withLock { s -> Bool in
            s.problem = problem
            defer { s.reportedProblem = problem }
            return s.reportedProblem != problem
        }
        if report { DaemonLog.error("Failed to read the shadow file \(path): \(problem)") }
        return nil
    }
}

extension ServerCore {
    /// The scanner found a new verdict (the shell saw `scanned`): each
    /// difference becomes a `passcode-changed` recorded by the daemon itself
    /// (like the start-up reconciliation).
    func noticeLoginPasswordChanges() {
        guard logHealth.isRecording, let shadow = passcodes as? ShadowPasscodes else { return }
        for change in shadow.changes() {
            run(.changePasscode(uid: change.uid, set: change.set, by: daemonUID),
                connection: nil, tag: nil, now: now)
        }
        // S-76: a copy of the login password bound to a line that changed is void.
        keyringCheck()
    }

    /// The passcode backend is chosen at start; a reload says so rather
    /// than seeming to switch (ClientPrompts= applies to new contexts at once).
    func noteRestartOnlyPasscodeKeys(_ fresh: DaemonConfiguration) {
        let old = configuration.passcode
        if fresh.passcode.backend != old.backend || fresh.passcode.shadowFile != old.shadowFile {
            journal(.notice, "[Passcode] Backend= and ShadowFile= take effect at the next start "
                + "(systemctl restart localauthd); still using \(passcodes.name).")
        }
    }

    /// S-44: set-passcode and clear-passcode name the tool that owns the file.
    func refusesLoginPasswordChange(_ request: Request, _ connection: Connection.ID) -> Bool {
        guard passcodes is ShadowPasscodes else { return false }
        reply(connection, request.tag, ProtocolError(.unavailable,
            "The passcode is the login password ([Passcode] Backend=shadow): change it with passwd."))
        return true
    }
}
