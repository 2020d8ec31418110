// One client connection: who is calling (from SO_PEERCRED, never from the
// client's words), its input splitter, its output, and the contexts it owns.
// Output is held back while a security failure is not yet durable (S-40):
// every byte queued after such a failure waits for its fsync.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

final class Connection {
    typealias ID = UInt64

    let id: ID
    let fd: FileDescriptor
    let peer: PeerCredentials
    /// The caller's rights as last judged (S-51: `Server.isAdmin` judges
    /// them again at each admin request).
    var isAdmin: Bool
    var splitter: LineSplitter
    /// Bytes ready to go to the socket, from `sentUpTo` on.
    var output: [UInt8] = []
    var sentUpTo = 0
    /// Output waiting for the log to be durable, in order, in one buffer
    /// (no allocation per held line); `heldGates` says up to which byte each
    /// seq gates.
    private(set) var heldBytes: [UInt8] = []
    private(set) var heldGates: [(seq: UInt64, end: Int)] = []
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
    /// No more requests are read (after `quit`, a protocol close, or EOF).
    var closing = false
    var closingSince: UInt64 = 0
    /// Whether epoll currently watches for writability.
    var watchingWritable = false
    /// In the server's `needFlush` list.
    var needsFlush = false
    /// In the server's `holding` list.
    var inHolding = false
    /// Closed and gone from the server's table (lists drop it lazily).
    var closed = false

    init(id: ID, fd: FileDescriptor, peer: PeerCredentials, isAdmin: Bool) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.isAdmin = isAdmin
        self.splitter = LineSplitter()
    }

    var pendingOutputBytes: Int { output.count - sentUpTo + heldBytes.count }

    var isHolding: Bool { !heldGates.isEmpty }

    /// Queues bytes, behind any held output, and behind `gate` if the log is
    /// not yet durable up to it.
    func enqueue(_ bytes: [UInt8], gate: UInt64, durable: UInt64) {
        guard gate > durable || !heldGates.isEmpty else {
            output.append(contentsOf: bytes)
            return
        }
        let seq = max(gate, heldGates.last?.seq ?? 0)
        heldBytes.append(contentsOf: bytes)
        if let last = heldGates.indices.last, heldGates[last].seq == seq {
            heldGates[last].end = heldBytes.count
        } else {
            heldGates.append((seq, heldBytes.count))
        }
    }

    /// Moves held output whose gate is now durable to `output`.
    func release(durable: UInt64) {
        var released = 0
        var end = 0
        for gate in heldGates {
            guard gate.seq <= durable else { break }
            end = gate.end
            released += 1
        }
        guard released > 0 else { return }
        output.append(contentsOf: heldBytes[..<end])
        if released == heldGates.count {
            dropHeld()
        } else {
            heldBytes.removeFirst(end)
            heldGates.removeFirst(released)
            for index in heldGates.indices { heldGates[index].end -= end }
        }
    }

    /// Forgets held output (it will never be durable, or the peer is gone).
    func dropHeld() {
        heldBytes.removeAll(keepingCapacity: heldBytes.capacity <= 65536)
        heldGates.removeAll(keepingCapacity: true)
    }

    /// Writes what it can without blocking. Returns false if the peer is gone.
    func flush() -> Bool {
        while sentUpTo < output.count {
            let result: Int?
            do {
                let start = sentUpTo
                result = try output.withUnsafeBytes { buffer throws(SystemError) in
                    try fd.send(UnsafeRawBufferPointer(rebasing: buffer[start...]))
                }
            } catch {
                return false
            }
            guard let written = result else { break }  // would block
            sentUpTo += written
        }
        if sentUpTo == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 65536)
            sentUpTo = 0
        } else if sentUpTo > 65536 {
            output.removeFirst(sentUpTo)
            sentUpTo = 0
        }
        return true
    }

    /// Drops output not yet sent, except the rest of a line the kernel
    /// already has the start of, so the client never sees a spliced line.
    func discardUnsentOutput() {
        dropHeld()
        if sentUpTo > 0, sentUpTo < output.count, output[sentUpTo - 1] != UInt8(ascii: "\n"),
           let end = output[sentUpTo...].firstIndex(of: UInt8(ascii: "\n")) {
            output.removeSubrange((end + 1)...)
        } else {
            output.removeAll()
            sentUpTo = 0
        }
    }

    var hasUnsentOutput: Bool { sentUpTo < output.count }
    var isDrained: Bool { !hasUnsentOutput && !isHolding }
}
