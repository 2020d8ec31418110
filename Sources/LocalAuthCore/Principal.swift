// S-53: who a caller is for the daemon's limits. SO_PEERCRED's uid says what
// a caller may do (root opens on-behalf contexts, S-42); it is a poor key for
// "how much": one user appears as 65536 uids through the subordinate range
// /etc/subuid gives them (newuidmap), and every setuid program (su, sudo,
// pkexec) appears as uid 0. The *principal* is the user that one person
// cannot multiply:
//   - a setuid program counts for whoever ran it: the peer's real uid, read
//     race-free through its pidfd (the daemon's shell does that);
//   - a subordinate uid counts for the range's owner. An unprivileged user's
//     user namespace maps only their own uid and the ranges /etc/subuid
//     delegates to them (newuidmap checks), so the range owner is who made
//     the namespace, even when the daemon (an unprivileged user itself)
//     may not look at the namespace. A namespace root made with uids of its
//     own choosing is root's decision: each such uid is its own principal.
// Root's own processes (real uid 0: login, sshd, a root shell, root's
// localauthctl) are told apart from setuid ones: the reserved connection
// slots and the space reserve are theirs.

/// The delegations of /etc/subuid (`owner:first:count` lines), sorted.
public struct SubordinateRanges: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        var first: UInt32
        var count: UInt32
        var owner: UserID
    }

    private var ranges: [Range] = []
    /// `reach[i]`: the highest end (first + count) of ranges[0...i], so a
    /// search down from a uid stops where nothing earlier can reach it.
    private var reach: [UInt64] = []

    public init() {}

    /// Parses /etc/subuid's text. An owner written as a name is resolved
    /// with `uidOfName`; a name it does not know (an account of a directory
    /// service) is keyed by the first uid of its first range, a uid only it
    /// can have. Lines that do not parse are skipped.
    public init(subuid text: String, uidOfName: (String) -> UserID?) {
        var unresolved: [Substring: UserID] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 3, !fields[0].isEmpty, let first = UInt32(fields[1]), let count = UInt32(fields[2]),
                  count > 0, UInt64(first) + UInt64(count) <= UInt64(UInt32.max) else { continue }
            let name = fields[0]
            let owner: UserID
            if name.allSatisfy({ $0.isASCII && $0.isNumber }), let uid = UInt32(name) {
                owner = uid
            } else if let uid = uidOfName(String(name)) {
                owner = uid
            } else {
                owner = unresolved[name] ?? first
                unresolved[name] = owner
            }
            ranges.append(Range(first: first, count: count, owner: owner))
        }
        ranges.sort { $0.first < $1.first }
        var highest: UInt64 = 0
        reach = ranges.map { range in
            highest = max(highest, UInt64(range.first) + UInt64(range.count))
            return highest
        }
    }

    /// The owner of the range `uid` falls in, or nil. Ranges of different
    /// owners should not overlap (useradd never makes them so); where they
    /// do, the one that starts nearest below `uid` is taken.
    public func owner(of uid: UserID) -> UserID? {
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].first <= uid { low = middle + 1 } else { high = middle }
        }
        var index = low - 1
        while index >= 0, UInt64(uid) < reach[index] {
            if UInt64(uid) < UInt64(ranges[index].first) + UInt64(ranges[index].count) { return ranges[index].owner }
            index -= 1
        }
        return nil
    }

    public var isEmpty: Bool { ranges.isEmpty }
}

/// A caller's principal, resolved once per connection.
public struct Principal: Sendable, Hashable {
    /// The uid whose limits the caller's requests count against.
    public var uid: UserID
    /// Root's own process (its real uid is 0, as the kernel said): the
    /// reserved connection slots and the space reserve are open to it.
    public var isRootsOwn: Bool

    public init(uid: UserID, isRootsOwn: Bool) {
        self.uid = uid
        self.isRootsOwn = isRootsOwn
    }

    /// The principal of a peer whose SO_PEERCRED uid is `peerUID` and whose
    /// real uid is `realUID` (nil: the kernel could not say; the peer's uid
    /// stands for it, and the peer is not root's own, whatever its uid).
    public static func of(peerUID: UserID, realUID: UserID?, ranges: SubordinateRanges) -> Principal {
        let base = realUID ?? peerUID
        let owner = ranges.owner(of: base) ?? base
        return Principal(uid: owner, isRootsOwn: realUID == 0 && owner == 0)
    }

    /// Where the caller's principal is not known (tests, the simulator):
    /// its uid, root's own when it is 0.
    public static func assumed(for uid: UserID) -> Principal {
        Principal(uid: uid, isRootsOwn: uid == 0)
    }
}

/// S-53's admission of a new connection.
public enum ConnectionAdmission {
    /// Slots of `MaxConnections` kept for root's own processes and the
    /// administrators: a sixteenth (256 of the default 4096; none below 16).
    public static func reserved(of maxConnections: Int) -> Int { maxConnections / 16 }

    /// Whether a connection is let in, with `open` connections in all and
    /// `openOfPrincipal` of its principal. The per-principal cap holds for
    /// everyone; only callers that `mayUseReserve` get the last slots.
    public static func admits(open: Int, openOfPrincipal: Int, maxConnections: Int, maxPerPrincipal: Int,
                              mayUseReserve: Bool) -> Bool {
        guard openOfPrincipal < maxPerPrincipal else { return false }
        let limit = mayUseReserve ? maxConnections : maxConnections - reserved(of: maxConnections)
        return open < limit
    }
}
