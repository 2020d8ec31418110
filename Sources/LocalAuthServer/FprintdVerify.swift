// The biometric prompt under fprintd (S-43): one reader for every user.
// Users whose prompt waits for a reading queue in arrival order; the first
// gets the device (Claim(user), VerifyStart("any")) and its PROMPT line is
// sent only then (the core recorded the prompt when it was asked, so S-31's
// timeout runs from that moment). Whatever ends the prompt (a verdict, a
// cancel, an invalidation, a disconnect, a timeout, a preemption, the
// passcode phase, shutdown) reaches `scanCancelled`, which sends VerifyStop
// and Release; the next user's Claim waits for Release's answer (fprintd
// closes the device asynchronously and refuses a Claim meanwhile). A Claim
// refused because another program holds the reader is tried again every
// half second while the prompt waits (S-31's timeout bounds it).
//
// Late statuses: a VerifyStatus counts only while this daemon's
// verification runs (after VerifyStart's reply, before it sent VerifyStop).
// fprintd's statuses reach the loop in the order it sent them, and the loop
// reads the bus first in every turn (EventLoop.run), so a no-match sent before
// the prompt ended is counted once (a done status ends that verification:
// the next attempt starts a new one); one sent after our VerifyStop counts
// nothing, as S-43 says.
import LocalAuthCore
import LocalAuthSystem

struct ActiveScan {
    enum Phase { case naming, claiming, starting, verifying, between }
    var uid: UserID
    var phase: Phase
    var username: String?
    /// Whether the device is claimed (Release owed).
    var claimed = false
    /// Whether this prompt's PROMPT line went out (VerifyStart succeeded once).
    var shown = false
}

extension FprintdSensor {
    func scanRequested(uid: UserID) {
        if !queue.contains(uid) { queue.append(uid) }
        startNextScan()
    }

    func scanCancelled(uid: UserID) {
        queue.removeAll { $0 == uid }
        if let active, active.uid == uid {
            // S-63, F-50: fprintd suspends its device with the system and
            // refuses a Release meanwhile ("busy"), after which it has
            // forgotten the claim but kept the device open, so no Claim
            // works again. The verification stops now; the claim is given
            // back when the system wakes up.
            finish(active, release: !suspended)
            if suspended, active.claimed { releaseOnResume = true }
            self.active = nil
            startNextScan()
        }
    }

    func systemSleeping(_ suspending: Bool) {
        suspended = suspending
        if !suspending, releaseOnResume {
            releaseOnResume = false
            release()
        }
        if !suspending { startNextScan() }
    }

    /// Gives the reader to the first waiting user when it is free.
    func startNextScan() {
        // fprintd asleep (activatable, exited when idle): wake it first.
        if device == nil, bus != nil, !queue.isEmpty, problem == nil { discover() }
        guard active == nil, !releasing, !suspended, !releaseOnResume, let uid = queue.first, device != nil, bus != nil,
              MonotonicClock.nowNanos() >= claimRetryAt else { return }
        active = ActiveScan(uid: uid, phase: .naming)
        names.resolve(uid) { [unowned self] name in
            guard var scan = active, scan.uid == uid, scan.phase == .naming else { return }
            guard let name else { return sensorFailed(uid, .disconnect, "uid \(uid) has no passwd entry for fprintd") }
            scan.username = name
            scan.phase = .claiming
            active = scan
            claim(uid, name)
        }
    }

    private func claim(_ uid: UserID, _ name: String) {
        guard let device else { return sensorFailed(uid, .disconnect, "no reader") }
        let sent = call(device, FprintdReplies.deviceInterface, "Claim", [.string(name)]) { [unowned self] reply in
            guard var scan = active, scan.uid == uid, scan.phase == .claiming else {
                // The prompt ended while the Claim was in flight: give the device back.
                if reply.error == nil { release() }
                return
            }
            if let error = reply.error, error.name == "net.reactivated.Fprint.Error.AlreadyInUse" {
                // Another program verifies or enrolls: the prompt waits for the reader.
                active = nil
                claimRetryAt = MonotonicClock.nowNanos() + 500_000_000
                return
            }
            if let error = reply.error {
                return sensorFailed(uid, .disconnect, "Claim: \(error.name) \(error.message)")
            }
            scan.claimed = true
            active = scan
            verifyStart(uid)
        }
        if !sent { sensorFailed(uid, .disconnect, "Claim not sent") }
    }

    func verifyStart(_ uid: UserID) {
        guard var scan = active, scan.uid == uid, let device else { return }
        scan.phase = .starting
        active = scan
        let sent = call(device, FprintdReplies.deviceInterface, "VerifyStart", [.string("any")]) { [unowned self] reply in
            guard var scan = active, scan.uid == uid, scan.phase == .starting else { return }
            if let error = reply.error {
                return sensorFailed(uid, .disconnect, "VerifyStart: \(error.name) \(error.message)")
            }
            scan.phase = .verifying
            let first = !scan.shown
            scan.shown = true
            active = scan
            // The core sends the PROMPT line it held for this user.
            if first { reports.append(.scanShown(uid)) }
        }
        if !sent { sensorFailed(uid, .disconnect, "VerifyStart not sent") }
    }

    /// A VerifyStatus signal from fprintd (any sender's: checked here).
    func verifyStatus(_ message: DBusMessage) {
        guard var scan = active, scan.phase == .verifying, let device, message.path == device,
              let (reading, done) = FprintdReplies.verifyStatus(message) else { return }
        if done { scan.phase = .between }
        active = scan
        if case .error = reading { return checkReaderAfterError(scan.uid, reading) }
        deliver(reading, to: scan.uid, done: done)
    }

    /// verify-unknown-error: fprintd 1.94 also sends it when the reader is
    /// unplugged mid-verification (libfprint's "device removed"), and
    /// removes the device only once it is released. So the device is given
    /// back at once, and the verdict waits (at most `errorGrace`) for
    /// fprintd's InterfacesRemoved of it: removed is S-27's disappeared
    /// sensor (-13 for policy 1, the passcode for policy 2); still there is
    /// S-43's systemCancel.
    private func checkReaderAfterError(_ uid: UserID, _ reading: SensorReading) {
        guard let scan = active, scan.uid == uid else { return }
        finish(scan, release: true)
        active = ActiveScan(uid: uid, phase: .between)
        pendingError = (uid, reading, MonotonicClock.nowNanos() + FprintdSensor.errorGrace)
    }

    /// At the timer: an error whose reader did not disappear in time is a verdict.
    func expirePendingError() {
        guard let pending = pendingError, MonotonicClock.nowNanos() >= pending.deadline else { return }
        pendingError = nil
        guard active?.uid == pending.uid, active?.phase == .between else { return }
        active = nil
        reports.append(.reading(pending.uid, pending.reading))
        startNextScan()
    }

    /// fprintd's ObjectManager removed a device: ours means the reader is gone.
    func deviceRemoved(_ path: String) {
        guard path == device else { return }
        pendingError = nil
        readerGone(problem: "The fingerprint reader was disconnected.")
    }

    private func deliver(_ reading: SensorReading, to uid: UserID, done: Bool) {
        reports.append(.reading(uid, reading))
        // The prompt still waits (a no-match with attempts left): a new
        // verification for the next attempt. A retry (done=false) keeps
        // the running one (S-43).
        if done, var again = active, again.uid == uid, again.phase == .between, let device = self.device {
            again.phase = .starting
            active = again
            _ = call(device, FprintdReplies.deviceInterface, "VerifyStop") { [unowned self] _ in
                guard let now = active, now.uid == uid, now.phase == .starting else { return }
                verifyStart(uid)
            }
        }
    }

    /// Ends the device's part in a prompt: VerifyStop if verifying, Release
    /// if claimed. Their answers are not waited for.
    func finish(_ scan: ActiveScan, release: Bool) {
        guard let device else { return }
        if scan.phase == .verifying || scan.phase == .starting || scan.phase == .between {
            _ = call(device, FprintdReplies.deviceInterface, "VerifyStop") { _ in }
        }
        if scan.claimed && release { self.release() }
    }

    /// Release, and the next Claim once fprintd answered it.
    func release() {
        guard let device else { return }
        releaseRetryAt = nil
        releasing = call(device, FprintdReplies.deviceInterface, "Release") { [unowned self] reply in
            // F-50: fprintd refuses a Release while its device is busy
            // (suspending with the system, S-63: "still busy with another
            // operation"); the claim would stay ours until our bus
            // connection closed. Asked again until fprintd takes it.
            if let error = reply.error, error.name != FprintdReplies.notClaimed, self.device == device,
               releaseRetries < FprintdSensor.releaseRetries {
                releaseRetries += 1
                releaseRetryAt = MonotonicClock.nowNanos() + FprintdSensor.releaseRetryAfter
                if releaseRetries == 1 { DaemonLog.notice("fprintd: Release refused (\(error.message)); asking again.") }
                return
            }
            releaseRetries = 0
            releasing = false
            startNextScan()
        }
    }

    /// At the timer: a refused Release is asked again once its pause is over.
    func retryRelease() {
        guard let at = releaseRetryAt, MonotonicClock.nowNanos() >= at else { return }
        release()
    }

    /// The reader failed under the active prompt: its reading ends it (or
    /// moves it to the passcode), and the device is given back.
    func sensorFailed(_ uid: UserID, _ reading: SensorReading, _ why: String) {
        DaemonLog.error("fprintd: the biometric prompt of uid \(uid) lost the reader: \(why)")
        if let scan = active, scan.uid == uid {
            finish(scan, release: true)
            active = nil
        }
        queue.removeAll { $0 == uid }
        reports.append(.promptsDropped(uid))
        reports.append(.reading(uid, reading))
        startNextScan()
    }

    /// fprintd or the reader went away: every waiting prompt's sensor
    /// disappeared (S-27: -13 for policy 1, the passcode for policy 2).
    func lostSensor() {
        pendingError = nil
        let waiting = (active.map { [$0.uid] } ?? []) + queue.filter { $0 != active?.uid }
        active = nil
        queue.removeAll()
        reports.append(.promptsDropped(nil))
        for uid in waiting { reports.append(.reading(uid, .disconnect)) }
    }
}
