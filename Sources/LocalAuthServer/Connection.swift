// One client connection: who is calling (from SO_PEERCRED, never from the
// client's words), its input splitter, its output, and the contexts it owns.
// A record of the core's: it has no file descriptor and does no I/O (the
// shell keeps the socket, keyed by `id`, and writes `output` when the core
// says `.send`); output held back while a failure is not yet durable (S-40)
// is the ReplyGate's, not the connection's.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

final class Connection {
    typealias ID = UInt64

    let id: ID
    let peer: PeerCredentials
    /// The caller's rights as last judged (S-51: `ServerCore.isAdmin` judges
    /// them again at each admin request).
    var isAdmin: Bool
    var splitter: LineSplitter
    /// Bytes ready to go to the socket, from `sentUpTo` on.
    var output: [UInt8] = []
    var sentUpTo = 0
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
    /// When the current unfinished line started (IdleLineTimeoutSec), or nil.
    var partialLineSince: UInt64?
    /// Open (reading requests), closing (no more requests are read, after
    /// `quit`, a protocol close or EOF; replies owed still go out), or
    /// closed (gone from the server's table; lists drop it lazily).
    var state: State = .open

    enum State: Equatable {
        case open
        /// Since when (monotonic ns): a peer that does not read gets a few seconds.
        case closing(since: UInt64)
        case closed
    }
    /// S-43: a request waits for fprintd (EnrollmentParking.swift): no
    /// line of this connection is read or handled until it is answered.
    var readingPaused = false

    /// A `.send` of this connection is queued and its `wrote` not yet in.
    var sendPending = false
    /// Lines stay in the splitter behind an early write (`wrote` handles them).
    var linesWaiting = false

    init(id: ID, peer: PeerCredentials, isAdmin: Bool) {
        self.id = id
        self.peer = peer
        self.isAdmin = isAdmin
        self.splitter = LineSplitter()
    }

    var isOpen: Bool {
        if case .open = state { return true }
        return false
    }
    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Bytes queued and not yet sent (the ReplyGate counts what it holds).
    var unsentByteCount: Int { output.count - sentUpTo }
    var hasUnsentOutput: Bool { sentUpTo < output.count }

    /// After a write to the socket: the sent prefix is dropped once all
    /// is sent, or once it is large.
    func dropSent() {
        if sentUpTo == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 65536)
            sentUpTo = 0
        } else if sentUpTo > 65536 {
            output.removeFirst(sentUpTo)
            sentUpTo = 0
        }
    }

    /// Drops output not yet sent, except the rest of a line the kernel
    /// already has the start of, so the client never sees a spliced line.
    func discardUnsentOutput() {
        if sentUpTo > 0, sentUpTo < output.count, output[sentUpTo - 1] != UInt8(ascii: "\n"),
           let end = output[sentUpTo...].firstIndex(of: UInt8(ascii: "\n")) {
            output.removeSubrange((end + 1)...)
        } else {
            output.removeAll()
            sentUpTo = 0
        }
    }
}
