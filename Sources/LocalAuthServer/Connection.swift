// One client connection: who is calling (from SO_PEERCRED, never from the
// client's words), its input splitter, its output, and the contexts it owns.
// A value of the core's, stored in its ConnectionTable and named everywhere
// else by its `id` (gone from the table = closed): nothing holds it, so no
// list keeps a closed connection alive or has to skip one. It has no file
// descriptor and does no I/O (the shell keeps the socket, keyed by `id`, and
// writes `output` when the core says `.send`); output held back while a
// failure is not yet durable (S-40) is the ReplyGate's, not the connection's.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

package struct Connection {
    package typealias ID = UInt64

    let id: ID
    let peer: PeerCredentials
    /// Whose limits its requests count against (S-53), judged at accept.
    let principal: Principal
    /// Root's own process, or the daemon's own user's: exempt from the
    /// budgets and caps without a lookup (the hot path reads only this).
    let isPrivileged: Bool
    /// The caller's rights as last judged (S-51: `ServerCore.isAdmin` judges
    /// them again at each admin request).
    var isAdmin: Bool
    var splitter: LineSplitter
    package var output = PendingOutput()
    /// Contexts created on this connection (S-12).
    var contexts: Set<ContextID> = []
    /// Contexts invalidated by the app, oldest first (a subset of `contexts`).
    var invalidated: [ContextID] = []
    /// The uid's shared S-48 record (LogBudget.swift); nil once closed.
    var allowance: UserAllowance?
    /// Bytes of string properties of this connection's contexts that hold some (PropertyCaps.swift).
    var propertyBytes: [ContextID: Int] = [:]
    /// The tag of the running `evaluate` of each context.
    var evaluationTags: [ContextID: String] = [:]
    /// S-64: running evaluations whose success reply carries the notice.
    var notices: Set<ContextID> = []
    /// When the current unfinished line started (IdleLineTimeoutSec), or nil.
    var partialLineSince: UInt64?
    var state: State = .open(.lines)

    /// The connection's life in one value: what was three flags beside a
    /// state (paused, lines waiting, open/closing/closed) could combine in
    /// ways that meant nothing (a closing connection "paused", lines
    /// "waiting" behind a parked request); here each case is one thing the
    /// core does with the connection's input.
    enum State: Equatable {
        /// Reading requests, in one of three ways.
        case open(Reading)
        /// No more requests are read (after `quit`, a protocol close or EOF);
        /// replies owed still go out. Since when (monotonic ns): a peer that
        /// does not read gets a few seconds.
        case closing(since: UInt64)
        /// Being forgotten (`ServerCore.close`, which removes it from the
        /// table): a line loop still running for it stops.
        case closed
    }

    enum Reading: Equatable {
        /// Lines are handled as they arrive.
        case lines
        /// S-43 / S-51: a request waits for fprintd or an AdminGroup lookup
        /// (EnrollmentParking.swift): no line is read or handled until it
        /// is answered (the shell does not read the socket).
        case parked
        /// Lines stay in the splitter behind an early write: `wrote` handles
        /// them, in order (the shell may still read).
        case behindWrite
    }

    init(id: ID, peer: PeerCredentials, principal: Principal, isPrivileged: Bool, isAdmin: Bool) {
        self.id = id
        self.peer = peer
        self.principal = principal
        self.isPrivileged = isPrivileged
        self.isAdmin = isAdmin
        self.splitter = LineSplitter()
    }

    var isOpen: Bool {
        if case .open = state { return true }
        return false
    }
    /// Open and not parked: the shell may read it (`ServerCore.isReading`).
    var isReading: Bool { state.isReading }
    var isParked: Bool { state == .open(.parked) }
}

extension Connection.State {
    /// Open and not parked.
    var isReading: Bool {
        if case .open(let reading) = self { return reading != .parked }
        return false
    }
}

/// The bytes a connection owes its peer, and whether a `.send` of them is
/// with the shell. Apart from `State`: a closing connection still drains,
/// with a write in flight or not, so "in flight" is the output's, not a
/// case of the connection's life.
package struct PendingOutput {
    /// Bytes ready to go to the socket, from `sentUpTo` on.
    var bytes: [UInt8] = []
    var sentUpTo = 0
    /// A `.send` is queued and its `wrote` not yet in (one at a time).
    var inFlight = false
    /// S-77: a released login secret is in `bytes`: what is written, dropped
    /// or left at the close is zeroed first, not only freed.
    var holdsSecret = false

    /// Bytes queued and not yet sent (the ReplyGate counts what it holds).
    package var unsentByteCount: Int { bytes.count - sentUpTo }
    var hasUnsent: Bool { sentUpTo < bytes.count }

    /// After a write to the socket: the sent prefix is dropped once all
    /// is sent, or once it is large.
    mutating func dropSent() {
        if holdsSecret { wipe(upTo: sentUpTo) }
        if sentUpTo == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 65536)
            sentUpTo = 0
        } else if sentUpTo > 65536, !holdsSecret {
            // (Not while a secret is unsent: the move would leave a copy
            // of its tail past the new end.)
            bytes.removeFirst(sentUpTo)
            sentUpTo = 0
        }
    }

    /// Drops output not yet sent, except the rest of a line the kernel
    /// already has the start of, so the client never sees a spliced line.
    mutating func discardUnsent() {
        if holdsSecret {
            // A peer that does not read its released secret gets none of it.
            wipe(upTo: bytes.count)
            bytes.removeAll()
            sentUpTo = 0
            return
        }
        if sentUpTo > 0, sentUpTo < bytes.count, bytes[sentUpTo - 1] != UInt8(ascii: "\n"),
           let end = bytes[sentUpTo...].firstIndex(of: UInt8(ascii: "\n")) {
            bytes.removeSubrange((end + 1)...)
        } else {
            bytes.removeAll()
            sentUpTo = 0
        }
    }

    /// Zeroes the first `count` bytes (all of them: the capacity past the
    /// end holds nothing written since the secret). Once all is written,
    /// nothing of the secret is left.
    mutating func wipe(upTo count: Int) {
        bytes.withUnsafeMutableBytes { buffer in
            SecretMemory.wipe(UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(count, buffer.count)]))
        }
        if count >= bytes.count { holdsSecret = false }
    }
}
