// The shell's side of the client sockets: accepting on the listener (the
// core admits or refuses each peer by its credentials), and each
// connection's epoll events turned into the core's `received`, `writable`
// and `peerClosed` inputs. Reads are bounded per turn; a read that held a
// secret is wiped (S-50).
import Glibc
import LocalAuthSystem

extension EventLoop {
    func acceptAll() {
        while core.acceptsConnections {
            let accepted: FileDescriptor?
            do {
                accepted = try UnixSocket.accept(listener)
            } catch {
                // EMFILE and friends: stop for now, the next turn retries.
                DaemonLog.error("Failed to accept a connection: \(error)")
                return
            }
            guard let fd = accepted else { return }
            guard let peer = try? PeerCredentials(socket: fd) else {
                try? fd.close()
                continue
            }
            // S-53: whose limits it counts against, once, here (never per line).
            let principal = principals.principal(of: peer, on: fd)
            if let changed = principals.takeChangedRanges() { core.subordinateRanges = changed }
            switch core.connectionOpened(peer: peer, principal: principal) {
            case .refused(let bytes):
                _ = try? fd.send(bytes)
                try? fd.close()
            case .accepted(let id):
                do {
                    try epoll.add(fd, events: [.readable, .readHangUp], data: id)
                    sockets.insert(fd, for: id)
                } catch {
                    try? fd.close()
                    core.connectionFailed(id)
                }
            }
            perform()
        }
    }

    func connectionEvent(_ id: UInt64, _ events: Epoll.Events) {
        guard let fd = sockets[id] else { return }
        let gone = events.contains(.hangUp) || events.contains(.error)
        if gone, !core.isReading(id) {
            // Closing, or a request of it waits for fprintd: epoll reports
            // the hang-up at every turn, and nobody will read the answers.
            core.peerHungUp(id)
            return perform()
        }
        if events.contains(.writable) {
            let closed = closes
            core.writable(id)
            perform()
            if closes != closed, sockets[id] == nil { return }
        }
        if events.contains(.readable) || events.contains(.readHangUp) || gone {
            // Only its own requests pause or close a connection: after a
            // write (which may go on with its lines) the shell asks again.
            if events.contains(.writable), !core.isReading(id) { return }
            read(id, fd)
        }
    }

    /// Reads what the socket has (a budget of reads per wakeup, so one
    /// client cannot starve the rest) into the core.
    func read(_ id: Connection.ID, _ fd: FileDescriptor) {
        var budget = 16
        while budget > 0 {
            budget -= 1
            let count: Int?
            do {
                count = try readBuffer.withUnsafeMutableBytes { buffer throws(SystemError) in
                    try fd.receive(into: buffer)
                }
            } catch {
                core.peerClosed(id)
                return perform()
            }
            guard let count else { break }  // would block
            if count == 0 {
                core.peerClosed(id)
                return perform()
            }
            let more = readBuffer.withUnsafeBytes { core.received(UnsafeRawBufferPointer(rebasing: $0[0..<count]), on: id) }
            // S-50: the bytes of a line with a secret leave no copy behind.
            if core.lastInputHeldSecret {
                readBuffer.withUnsafeMutableBytes { SecretMemory.wipe($0.baseAddress!, count: count) }
            }
            let closed = closes
            perform()
            // A short read emptied the socket: epoll is level-triggered and
            // reports the rest (and EOF) next turn; skip the EAGAIN read.
            if !more || count < readBuffer.count { break }
            // Closed while its actions ran: the fd number may be reused at once.
            if closes != closed, sockets[id] == nil { break }
            // A write by those actions may have paused or closed it.
            if !core.isReading(id) { break }
        }
    }
}
