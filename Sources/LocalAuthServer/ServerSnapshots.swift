// The loop's side of S-49's snapshot digests: each snapshot the writer
// finished is recorded as a `snapshot-recorded` event, appended like any
// other event (so the chain vouches for the file), on the loop.
import LocalAuthCore
import LocalAuthLog

extension ServerCore {
    /// The snapshots the writer finished (the shell drained its inbox).
    package func snapshotsWritten(_ written: [(seq: UInt64, digest: ChainHead)]) {
        for written in written where logHealth.isRecording {
            _ = run(.recordSnapshot(seq: written.seq, sha256: written.digest.hex), connection: nil, tag: nil, now: now)
        }
    }
}
