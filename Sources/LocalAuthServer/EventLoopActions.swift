// The shell performing the core's actions (ServerAction.swift), in order,
// after every input call. Performing one may feed the core an input (`wrote`
// after `.send`, `configurationRead` after `.readConfiguration`), which may
// append more actions: the loop runs until the core has none.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem

extension EventLoop {
    func perform() {
        while !core.actions.isEmpty {
            core.takeActions(into: &batch)
            for action in batch { perform(action) }
            batch.removeAll(keepingCapacity: true)
        }
    }

    private func perform(_ action: ServerAction) {
        switch action {
        case .send(let id):
            send(id)
        case .watch(let id, let reading, let writing):
            guard let fd = sockets[id] else { return }
            var events: Epoll.Events = reading ? [.readable, .readHangUp] : []
            if writing { events.insert(.writable) }
            try? epoll.modify(fd, events: events, data: id)
        case .close(let id):
            guard let fd = sockets.remove(id) else { return }
            closes &+= 1
            try? epoll.remove(fd)
            try? fd.close()
        case .notify(let state):
            _ = try? Systemd.notify(state)
        case .journal(let entry):
            DaemonLog.write(entry.priority, entry.message, id: entry.id, fields: entry.fields)
        case .runPasscodeJob(let token, let job):
            workers.submit(token: token, job)
        case .lookUpGroup(let query):
            adminLookups.ask(query)
        case .readConfiguration:
            readConfiguration()
        case .releaseFreePages:
            Memory.releaseFreePages()
        case .hang(let seconds):
            DaemonLog.hangForTest(seconds)
        }
    }

    /// Writes what the socket takes of the connection's output without
    /// blocking, and tells the core how much; a write error is the peer gone.
    private func send(_ id: Connection.ID) {
        guard let fd = sockets[id] else { return core.connectionFailed(id) }
        core.writeOutput(id) { output -> Int? in
            var sent = 0
            while sent < output.count {
                let result: Int?
                do {
                    result = try fd.send(UnsafeRawBufferPointer(rebasing: output[sent...]))
                } catch {
                    return nil
                }
                guard let count = result else { break }  // would block
                sent += count
            }
            return sent
        }
    }

    /// SIGHUP: the configuration files, read again; a valid one that is
    /// probably not what was meant is warned about (its group lookups are NSS).
    private func readConfiguration() {
        guard let reload else { return core.configurationRead(.failure(StoreError("nothing to reload"))) }
        do {
            let fresh = try reload()
            core.configurationRead(.success(fresh))
            DaemonLog.warnAboutConfiguration(fresh)
        } catch {
            core.configurationRead(.failure(error))
        }
    }
}
