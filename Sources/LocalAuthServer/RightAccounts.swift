// S-59 in the loop: a right belongs to the account that saved it, not to
// its uid. Every right verb waits until its connection's uid has been
// looked up in the user database (AccountLookups: once per connection, off
// the loop); a save binds the right, its secret and its key to that
// account (RightStore.bind, RightAccount); and whenever an answer names a
// uid otherwise than its rights' account (another name, or none), those
// rights are dropped: gone from the store with their secrets and keys,
// recorded as `right-dropped` once the store is durable. Answers come for
// the connections' lookups and, at the start, for every uid with rights.
// Judged at use, not by watching /etc: a right can only be used through a
// connection, and every connection is looked up before its first right
// verb, so the right of a replaced account is never used; watching passwd
// (and every NSS source) would only drop it sooner. A right whose account
// is not the caller's known one is never used, even before it is dropped
// (a failed write rolls a drop back): it answers `unknown-right`.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    /// The lookup thread's work: what NSS says of a uid now.
    static func makeAccountLookups() throws -> LookupThread<AccountQuery, AccountAnswer> {
        try LookupThread { query in AccountAnswer.lookUp(query.uid) }
    }

    /// S-59, before every right verb: true when the connection's account
    /// is known; false when the request was answered (the lookup failed,
    /// the daemon stops) or now waits for the lookup (it is dispatched
    /// again when the answer is in).
    func rightsAccountKnown(_ request: Request, _ connection: Connection.ID) -> Bool {
        let uid = peer(of: connection).uid
        if service.isStopping, parked.rightAccounts.name(of: connection) == nil {
            reply(connection, request.tag, ProtocolError(.unavailable, "localauthd is stopping."))
            return false
        }
        let judged = parked.rightAccounts.judge(connection, uid: uid, now: turn.monotonic)
        switch judged.verdict {
        case .known?:
            return true
        case .failed(let why)?:
            reply(connection, request.tag, ProtocolError(.unavailable,
                "Rights belong to accounts, and the user database did not name uid \(uid) (\(why)); try again."))
            return false
        case nil:
            if let ask = judged.ask { actions.append(.lookUpAccount(ask)) }
            parked.rightAccounts.wait(connection, uid: uid,
                                      ParkedRequest(connection: connection, request: request, stamp: parked.lineStamp))
            pauseReading(connection)
            return false
        }
    }

    /// The lookup thread's answers (the shell collected them).
    package func accountsLookedUp(_ answers: [(AccountQuery, AccountAnswer)]) {
        for (query, answer) in answers {
            let taken = parked.rightAccounts.answered(query, answer, now: turn.monotonic)
            parked.letGo(taken.released)
            if let again = taken.again { actions.append(.lookUpAccount(again)) }
            if taken.accepted, case .entry(let name) = answer { bindRights(query.uid, to: name) }
        }
    }

    /// At the start (the user database may have changed while the daemon
    /// was down): every uid with rights is looked up.
    package func lookUpRightAccounts() {
        for ask in parked.rightAccounts.refresh(rights.store.uids, now: turn.monotonic) { actions.append(.lookUpAccount(ask)) }
    }

    /// Each tick: lookups stuck in NSS past AccountLookups.lookupLimit fail their requests.
    func expireAccountLookups() {
        guard !parked.rightAccounts.inFlight.isEmpty else { return }
        let released = parked.rightAccounts.expire(now: turn.monotonic)
        if !released.isEmpty {
            journal(.error, "A passwd lookup took over \(AccountLookups<ParkedRequest>.lookupLimit / 1_000_000_000) s (NSS); "
                + "the right requests that waited for it are refused.")
        }
        parked.letGo(released)
    }

    /// The account a right saved on `connection` is bound to: the life of
    /// the uid's rights, or a new one under the name its lookup gave.
    func rightAccount(for connection: Connection.ID) -> RightAccount {
        let uid = peer(of: connection).uid
        let name = parked.rightAccounts.name(of: connection)
        if let life = rights.store.account(of: uid), life.name == name { return life }
        return RightAccount(name: name, born: rights.store.newBorn(now: turn.time.wall))
    }

    /// The caller's right of that identifier, if it is bound to the
    /// caller's account as the user database names it (S-59).
    func callersRight(_ connection: Connection.ID, _ identifier: String) -> StoredRight? {
        guard let right = rights.store.right(peer(of: connection).uid, identifier), isCallers(right, connection) else { return nil }
        return right
    }

    func isCallers(_ right: StoredRight, _ connection: Connection.ID) -> Bool {
        guard let account = right.account else { return false }
        return account.name == parked.rightAccounts.name(of: connection)
    }

    /// `uid` is named `name` now: rights bound to another account are
    /// dropped, rights not bound yet are bound (sealed again), and the
    /// store is written; the drops are recorded once it is durable.
    private func bindRights(_ uid: UserID, to name: String?) {
        let bound = rights.store.bind(uid, to: name, key: rights.secretKey, now: turn.time.wall)
        guard bound.changed else { return }
        let facts = bound.dropped.map { identifier, right in
            RightFact.dropped(uid: uid, identifier: identifier, requirement: right.requirement, name: right.account?.name,
                              reason: name == nil ? .accountRemoved : .accountReplaced)
        }
        if let gone = bound.dropped.first?.1.account {
            journal(.notice, "Dropped \(bound.dropped.count) right(s) of uid \(uid): the account "
                + "\(gone.name.map { "'\($0)'" } ?? "without a passwd entry") they were saved by is gone (S-59).",
                fields: [("LOCALAUTH_UID", String(uid))])
        }
        awaitRightsWrite(RightWaiter(connection: nil, tag: "", facts: facts))
    }
}

extension AccountAnswer {
    /// getpwuid_r through NSS (blocking: the lookup thread's).
    static func lookUp(_ uid: UserID) -> AccountAnswer {
        do throws(SystemError) {
            guard let user = try Accounts.user(uid: uid) else { return .entry(nil) }
            guard AccountName.isValid(user.name) else { return .failed("its name has control characters or is too long") }
            return .entry(user.name)
        } catch {
            return .failed("\(error)")
        }
    }
}
