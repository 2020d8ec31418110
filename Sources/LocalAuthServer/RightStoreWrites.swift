// The right store's writes leave the event loop (issue 27 item 7): each
// `right-save` rewrote and fsync'd the whole store on the loop, so one
// user's 200 pipelined saves stalled every other user's `ping` by seconds.
//
// Now a save or remove changes the store in memory (RightStore) and waits;
// the shell writes the store's bytes on a thread of its own (`.writeRights`)
// and hands back `rightsWritten`. One write is in flight at a time: changes
// made meanwhile wait for the next one, which carries them all (group
// commit, as the log's fsync). Once a write is durable its waiters'
// right events are recorded and they get their OK, in order: an OK still
// means the store is on disk (PROTOCOL.md). A failed write drops every
// change since the last durable one (the store rolls back) and answers
// each waiter `internal`. Saves and removes are charged to their user's
// S-48 budget as before, which bounds how often one user can ask.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

/// The store's bytes for the shell's writer thread.
package struct RightsWrite: Sendable {
    package var token: UInt64
    package var path: String
    package var bytes: [UInt8]
}

extension ServerCore {
    /// A change is in the store's memory: it is answered once a write that
    /// holds it is durable (SavedRights.swift keeps the writes).
    func awaitRightsWrite(_ waiter: RightWaiter) {
        if let write = rights.awaitWrite(waiter) { actions.append(.writeRights(write)) }
    }

    /// The shell's answer to `.writeRights`: nil when the bytes are durable.
    func rightsWritten(_ token: UInt64, failure: SystemError?) {
        guard let answer = rights.written(token, failed: failure != nil) else { return }
        if case .failed(let dropped) = answer, let failure {
            journal(.error, "Failed to write the right store \(rights.store.path): \(failure)")
            for waiter in dropped {
                guard let connection = waiter.connection, connections.contains(connection) else { continue }
                reply(connection, waiter.tag, ProtocolError(.internal, "The right store could not be written."))
            }
        }
        guard case .durable(let waiters) = answer else { return }
        for waiter in waiters {
            // The store changed whether or not its requester is still there:
            // the change is recorded either way; only an open one is answered.
            guard let connection = waiter.connection, connections.contains(connection) else {
                for fact in waiter.facts { _ = run(.recordRight(fact), connection: nil, tag: nil, now: now) }
                continue
            }
            var recorded = true
            for fact in waiter.facts where recorded {
                let outcome = run(.recordRight(fact), connection: connection, tag: waiter.tag, now: now)
                recorded = events(outcome, connection, waiter.tag) != nil
            }
            if recorded { replyOK(connection, waiter.tag) }
        }
        if let next = rights.nextWrite() { actions.append(.writeRights(next)) }
    }
}
