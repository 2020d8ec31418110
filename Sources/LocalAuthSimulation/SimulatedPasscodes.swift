// The passcode store the simulated daemon checks against: a PasscodeBackend
// whose records are the secret itself behind a prefix (no yescrypt: a check
// costs a compare), kept outside the daemon's process so that it survives a
// crash as the builtin store's file does (written before its event; the
// start reconciles the two, Daemon.reconcile). A commit can be made to fail
// (the store's disk full), which set-passcode must answer without recording.
// The one fake backend: the core tests (CoreHarness) check against it too.
import LocalAuthCore
import LocalAuthServer

final class SimulatedPasscodes: PasscodeStore {
    let name = "simulated"
    private(set) var records: [UserID: String] = [:]
    /// The next commit fails (armed by the run).
    var failNextCommit = false
    private(set) var commitsFailed = 0

    static func record(_ secret: some Sequence<UInt8>) -> String { "sim:" + String(decoding: Array(secret), as: UTF8.self) }

    func set(_ secret: String, for uid: UserID) { records[uid] = Self.record(Array(secret.utf8)) }

    /// The user's passcode now (the fake clients type it, or not).
    func passcode(of uid: UserID) -> String? { records[uid].map { String($0.dropFirst(4)) } }

    func isSet(_ uid: UserID) -> Bool { records[uid] != nil }
    var users: [UserID] { records.keys.sorted() }

    func checker(for uid: UserID) -> @Sendable ([UInt8]) -> Bool {
        let record = records[uid]
        return { secret in record != nil && record == SimulatedPasscodes.record(secret) }
    }

    let recordMaker: @Sendable ([UInt8]) throws -> String = { secret in SimulatedPasscodes.record(secret) }

    struct CommitFailed: Error, CustomStringConvertible {
        var description: String { "No space left on device (simulated)" }
    }

    func commit(_ record: String?, for uid: UserID) throws {
        if failNextCommit {
            failNextCommit = false
            commitsFailed += 1
            throw CommitFailed()
        }
        records[uid] = record
    }
}
