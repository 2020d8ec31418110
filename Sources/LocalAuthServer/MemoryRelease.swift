// Issue 15 item 11: memory returns when connections with many contexts close.
// Swift's dictionaries keep their peak capacity and glibc keeps freed heap
// pages mapped, so a user who once held thousands of contexts would leave the
// daemon at its peak size. After enough contexts ended (counted in
// `endContexts`) and 100 ms passed with no more ending (the wave is over; a
// deadline, Deadlines.swift), the timer rebuilds the context tables at their
// present size and asks malloc to hand free pages back (malloc_trim). Both
// are O(live contexts) and run only after such a wave of closes.
import LocalAuthSystem
import LocalAuthCore

extension ServerCore {
    /// Contexts ended since the last release that make one worth its cost.
    static let contextsWorthARelease = 256

    func releaseMemoryAfterClosedContexts() {
        let ended = limits.contextsEnded
        defer { limits.contextsEndedAtLastPass = limits.contextsEnded }
        guard ended >= ServerCore.contextsWorthARelease, ended == limits.contextsEndedAtLastPass,
              turn.monotonic >= deadlines.lastPass + CoreDeadlines.memoryWaveEnd else { return }
        limits.contextsEnded = 0
        limits.memoryReleases += 1
        authenticator.compactContexts()
        roster.compactOwners()
        if connections.capacity > 4 * max(2 * connections.count, 1024) { connections.shrinkToFit() }
        actions.append(.releaseFreePages)
    }
}

extension Authenticator {
    /// The live contexts' table at its present size (the state is unchanged).
    func compactContexts() {
        mutateStorage { state in
            if state.contexts.capacity > 4 * max(state.contexts.count, 64) { state.contexts = state.contexts.resizedToFit() }
        }
    }
}

extension Dictionary {
    /// A copy whose capacity fits its count.
    func resizedToFit() -> [Key: Value] {
        var copy = [Key: Value](minimumCapacity: count)
        for (key, value) in self { copy[key] = value }
        return copy
    }
}
