// The loop's side of S-49's snapshot digests: each snapshot the writer
// finished is recorded as a `snapshot-recorded` event, appended like any
// other event (so the chain vouches for the file), on the loop.
import LocalAuthCore

extension Server {
    func watchSnapshots(_ inbox: SnapshotInbox) throws {
        snapshotInbox = inbox
        try epoll.add(inbox.wake.fileDescriptor, events: .readable, data: Token.snapshots.rawValue)
    }

    func recordWrittenSnapshots() {
        guard let inbox = snapshotInbox else { return }
        for written in inbox.drain() where logFailure == nil {
            _ = run(.recordSnapshot(seq: written.seq, sha256: written.digest.hex), connection: nil, tag: nil, now: now)
        }
    }
}
