// The simulator's file system: the log's Storage port (LocalAuthSystem/
// Storage.swift) in memory, so that the real EventLog, its writer, seals,
// snapshots, Replay and Repair run on it. Each file keeps what the page
// cache holds and what the platter holds; fdatasync copies one to the
// other. Creates, renames and unlinks are journalled in order and durable
// once a directory fsync commits them. Faults, armed by the run, strike the
// next call: a torn write (a prefix, then EIO), EIO or ENOSPC on a write,
// EIO or ENOSPC on a sync; the room left is the run's (other files come
// and go). A crash keeps what is durable plus some of what is not, in one of two
// ways: a prefix of each file's unsynced bytes (writeback in order, the
// last write torn), or each unsynced 4 KiB page on its own, as
// FoundationDB's AsyncFileNonDurable loses writes; the namespace keeps a
// prefix of its uncommitted journal. Handles of the crashed process fail
// from then on. Bit rot flips a durable bit.
import Glibc
import LocalAuthSystem
import Synchronization

final class SimulatedStorage: Storage, @unchecked Sendable {
    struct Inode {
        /// The page cache's bytes (what reads see).
        var cache: [UInt8] = []
        /// The platter's.
        var durable: [UInt8] = []
        /// Bytes of `cache` written or cut since the last sync: [start, end) ranges.
        var dirty: [Range<Int>] = []
        var sizeChanged = false
    }

    enum NameChange {
        case link(String, Int)
        case unlink(String)
        case rename(String, String)
        case mkdir(String)

        func mentions(_ path: String) -> Bool {
            switch self {
            case .link(let name, _), .unlink(let name), .mkdir(let name): name == path
            case .rename(let from, let to): from == path || to == path
            }
        }

        func touches(_ directory: String) -> Bool {
            switch self {
            case .link(let path, _), .unlink(let path), .mkdir(let path): parent(path) == directory
            case .rename(let from, let to): parent(from) == directory || parent(to) == directory
            }
        }
    }

    /// How a crash treats unsynced bytes.
    enum CrashKind: String { case inOrder = "in order", pages = "page by page" }

    /// What the next write or sync meets.
    enum Armed { case torn, eio, enospc }

    private(set) var inodes: [Int: Inode] = [:]
    private var nextInode = 1
    /// path -> inode, as the process sees it; the durable namespace; the journal between them.
    private(set) var names: [String: Int] = [:]
    private var directories: Set<String> = ["/"]
    private var durableNames: [String: Int] = [:]
    private var durableDirectories: Set<String> = ["/"]
    private var journal: [NameChange] = []
    /// The process's life: a crash starts a new one.
    private(set) var generation = 0
    private var suffix = 0

    var armedWrite: Armed?
    /// What the next fdatasync, fsync or directory fsync fails with (EIO,
    /// or ENOSPC as a file system that allocates at writeback reports it).
    var armedSync: Armed?
    /// How many bytes of a torn write of `count` reach the file (the run's choice).
    var tornKeep: (Int) -> Int = { $0 / 2 }
    /// Bytes the files may take in all before a write meets ENOSPC.
    var capacity = Int.max
    /// Told of each fault as it strikes (the oracle counts them).
    var struck: (Armed) -> Void = { _ in }

    var used: Int { inodes.values.reduce(0) { $0 + $1.cache.count } }
    var free: Int64 { capacity == .max ? Int64.max / 2 : Int64(capacity) - Int64(used) }

    // MARK: - Storage

    func open(
        _ path: String, _ access: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions, permissions: mode_t
    ) throws(SystemError) -> any StoredFile {
        if let inode = names[path] {
            if options.contains(.create) && options.contains(.exclusiveCreate) { throw SystemError(call: "open", errno: EEXIST) }
            if options.contains(.truncate) { try cut(inode, to: 0) }
            return SimulatedFile(storage: self, inode: inode, generation: generation)
        }
        guard options.contains(.create) else { throw SystemError(call: "open", errno: ENOENT) }
        guard directories.contains(parent(path)) else { throw SystemError(call: "open", errno: ENOENT) }
        let inode = nextInode
        nextInode += 1
        inodes[inode] = Inode()
        names[path] = inode
        journal.append(.link(path, inode))
        return SimulatedFile(storage: self, inode: inode, generation: generation)
    }

    func exists(_ path: String) -> Bool { names[path] != nil || directories.contains(path) }

    func entries(_ directory: String) throws(SystemError) -> [String] {
        guard directories.contains(directory) else { throw SystemError(call: "opendir", errno: ENOENT, path: directory) }
        let all = names.keys.filter { parent($0) == directory } + directories.filter { $0 != "/" && parent($0) == directory }
        return all.map { String($0.dropFirst(directory.count + 1)) }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    func createDirectory(_ path: String, mode: mode_t) throws(SystemError) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if directories.insert(prefix).inserted { journal.append(.mkdir(prefix)) }
        }
    }

    func rename(_ source: String, to destination: String) throws(SystemError) {
        guard let inode = names.removeValue(forKey: source) else { throw SystemError(call: "rename", errno: ENOENT, path: source) }
        guard directories.contains(parent(destination)) else {
            names[source] = inode
            throw SystemError(call: "rename", errno: ENOENT, path: destination)
        }
        names[destination] = inode
        journal.append(.rename(source, destination))
    }

    func unlink(_ path: String) throws(SystemError) {
        guard names.removeValue(forKey: path) != nil else { throw SystemError(call: "unlink", errno: ENOENT, path: path) }
        journal.append(.unlink(path))
    }

    /// A journal commit: every change up to the last one in this directory.
    func syncDirectory(_ path: String) throws(SystemError) {
        if let errno = syncFailure() { throw SystemError(call: "fsync", errno: errno, path: path) }
        guard let last = journal.lastIndex(where: { $0.touches(path) }) else { return }
        for change in journal[...last] { apply(change, to: &durableNames, &durableDirectories) }
        journal.removeSubrange(...last)
        collect()
    }

    /// Files no name refers to, now or after a crash, are gone.
    private func collect() {
        var referenced = Set(names.values).union(durableNames.values)
        for case .link(_, let inode) in journal { referenced.insert(inode) }
        for id in inodes.keys where !referenced.contains(id) { inodes[id] = nil }
    }

    func availableBytes(at path: String) -> Int64? { free }
    var readers: Int { 1 }

    func temporarySuffix() -> String {
        suffix += 1
        return String(suffix)
    }

    func writeAtomically(_ path: String, bytes: [UInt8], mode: mode_t) throws(SystemError) {
        try writeAtomicallyByRename(path, bytes: bytes, mode: mode)
    }

    // MARK: - Files

    func check(_ generation: Int) throws(SystemError) {
        // The process that opened it crashed: nothing it does reaches the disk.
        if generation != self.generation { throw SystemError(call: "write", errno: EIO) }
    }

    func write(_ inode: Int, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) {
        var count = bytes.count
        var failure: Int32?
        let growth = max(0, offset + count - inodes[inode]!.cache.count)
        if capacity != .max, used + growth > capacity {
            // A write fills what room is left, then the next call meets ENOSPC.
            count = max(0, min(count, capacity - used + (count - growth)))
            failure = ENOSPC
        } else if let fault = armedWrite {
            armedWrite = nil
            struck(fault)
            switch fault {
            case .torn: count = tornKeep(count); failure = EIO
            case .eio: count = 0; failure = EIO
            case .enospc: count = 0; failure = ENOSPC
            }
        }
        if count > 0 {
            var node = inodes[inode]!
            if node.cache.count < offset + count {
                node.cache.append(contentsOf: repeatElement(0, count: offset + count - node.cache.count))
                node.sizeChanged = true
            }
            node.cache.withUnsafeMutableBytes { raw in
                raw.baseAddress!.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: count)
            }
            node.dirty.append(offset..<(offset + count))
            inodes[inode] = node
        }
        if let failure { throw SystemError(call: "pwrite", errno: failure) }
    }

    func cut(_ inode: Int, to size: Int) throws(SystemError) {
        var node = inodes[inode]!
        if size < node.cache.count { node.cache.removeSubrange(size...) } else {
            node.cache.append(contentsOf: repeatElement(0, count: size - node.cache.count))
        }
        node.sizeChanged = true
        node.dirty.append(min(size, node.durable.count)..<max(size, node.durable.count))
        inodes[inode] = node
    }

    func sync(_ inode: Int) throws(SystemError) {
        if let errno = syncFailure() { throw SystemError(call: "fdatasync", errno: errno) }
        inodes[inode]!.durable = inodes[inode]!.cache
        inodes[inode]!.dirty = []
        inodes[inode]!.sizeChanged = false
    }

    private func syncFailure() -> Int32? {
        guard let fault = armedSync else { return nil }
        armedSync = nil
        struck(fault)
        return fault == .enospc ? ENOSPC : EIO
    }

    // MARK: - Crashes and rot

    /// The machine goes down: what survives is chosen by `choose(n)` (a
    /// number below n). Returns the handles' new generation.
    func crash(_ kind: CrashKind, choose: (Int) -> Int) {
        var names = durableNames, directories = durableDirectories
        for change in journal.prefix(choose(journal.count + 1)) { apply(change, to: &names, &directories) }
        self.names = names
        self.directories = directories
        durableNames = names
        durableDirectories = directories
        journal = []
        let live = Set(names.values)
        for id in inodes.keys.sorted() {
            guard live.contains(id), var node = inodes[id] else {
                inodes[id] = nil
                continue
            }
            node.durable = survivor(node, kind, choose)
            node.cache = node.durable
            node.dirty = []
            node.sizeChanged = false
            inodes[id] = node
        }
        collect()
        generation += 1
        armedWrite = nil
        armedSync = nil
    }

    /// The durable bytes after a crash: the platter's, with some of the page cache's.
    private func survivor(_ node: Inode, _ kind: CrashKind, _ choose: (Int) -> Int) -> [UInt8] {
        guard !node.dirty.isEmpty else { return node.durable }
        var bytes = node.durable
        // The size: the new one reached the disk, or not (a grown file's tail, a cut's).
        let size = node.sizeChanged && choose(2) == 0 ? node.durable.count : node.cache.count
        if bytes.count < size { bytes.append(contentsOf: repeatElement(0, count: size - bytes.count)) }
        if bytes.count > size { bytes.removeSubrange(size...) }
        let start = node.dirty.map(\.lowerBound).min()!
        let end = min(size, node.cache.count, node.dirty.map(\.upperBound).max()!)
        guard start < end else { return bytes }
        switch kind {
        case .inOrder:
            // Written back from the first dirty byte on, up to a point.
            let keep = start + choose(end - start + 1)
            for offset in start..<keep { bytes[offset] = node.cache[offset] }
        case .pages:
            for page in stride(from: start & ~4095, to: end, by: 4096) where choose(2) == 0 {
                for offset in max(page, start)..<min(page + 4096, end) { bytes[offset] = node.cache[offset] }
            }
        }
        return bytes
    }

    /// Flips one durable bit of the file at `path` (the platter rotted).
    func rot(_ path: String, at offset: Int, bit: Int) {
        guard let id = names[path] else { return }
        inodes[id]!.durable[offset] ^= UInt8(1 << bit)
        inodes[id]!.cache[offset] ^= UInt8(1 << bit)
    }

    /// A file's state, for a failure's trace.
    func describe(_ path: String) -> String {
        guard let id = names[path], let node = inodes[id] else { return "no \(path)" }
        return "inode \(id) durable name \(durableNames[path].map(String.init) ?? "-") journal \(journal.filter { $0.mentions(path) }.count) "
            + "cache \(node.cache.count) durable \(node.durable.count) dirty \(node.dirty.prefix(4))"
    }

    /// The bytes of `path` as reads see them.
    func contents(_ path: String) -> [UInt8]? { names[path].map { inodes[$0]!.cache } }

    /// Whether the first `end` bytes of `path` would survive a crash now,
    /// under that name: the name is in the durable namespace, and nothing
    /// written below `end` since the last sync.
    func isDurable(_ path: String, through end: Int) -> Bool {
        guard let id = names[path], durableNames[path] == id, !journal.contains(where: { $0.mentions(path) }),
              let node = inodes[id] else { return false }
        guard end <= node.durable.count else { return false }
        return !node.dirty.contains { $0.lowerBound < end }
    }

    private func apply(_ change: NameChange, to names: inout [String: Int], _ directories: inout Set<String>) {
        switch change {
        case .link(let path, let inode): names[path] = inode
        case .unlink(let path): names[path] = nil
        case .rename(let from, let to): names[to] = names.removeValue(forKey: from)
        case .mkdir(let path): directories.insert(path)
        }
    }
}

func parent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// A handle of the simulated file system.
final class SimulatedFile: StoredFile, @unchecked Sendable {
    let storage: SimulatedStorage
    let inode: Int
    let generation: Int

    init(storage: SimulatedStorage, inode: Int, generation: Int) {
        self.storage = storage
        self.inode = inode
        self.generation = generation
    }

    private var node: SimulatedStorage.Inode? { storage.inodes[inode] }

    func size() throws(SystemError) -> Int {
        try storage.check(generation)
        return node?.cache.count ?? 0
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        try storage.check(generation)
        guard let bytes = node?.cache, offset < bytes.count else { return 0 }
        let count = min(buffer.count, bytes.count - offset)
        bytes.withUnsafeBytes { raw in buffer.baseAddress!.copyMemory(from: raw.baseAddress! + offset, byteCount: count) }
        return count
    }

    func writeAll(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) {
        try storage.check(generation)
        guard !buffer.isEmpty else { return }
        try storage.write(inode, buffer, at: offset)
    }

    func fdatasync() throws(SystemError) {
        try storage.check(generation)
        try storage.sync(inode)
    }

    func fsync() throws(SystemError) { try fdatasync() }

    func truncate(to size: Int) throws(SystemError) {
        try storage.check(generation)
        try storage.cut(inode, to: size)
    }

    func chmod(_ mode: mode_t) throws(SystemError) { try storage.check(generation) }
    func dropCachedPages(offset: Int, length: Int) {}
    func availableBytes() throws(SystemError) -> Int64 { storage.free }

    func reopenedForSync() throws(SystemError) -> any StoredFile {
        try storage.check(generation)
        return SimulatedFile(storage: storage, inode: inode, generation: generation)
    }

    func close() {}
}
