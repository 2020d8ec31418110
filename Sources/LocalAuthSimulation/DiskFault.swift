// What the run can do to the log's storage and the passcode store, and how
// many times it did (SimulatedStorage says how each strikes).

public enum DiskFault: String, CaseIterable, Sendable, Comparable {
    case tornWrite = "torn write (a prefix reaches the file, then EIO)"
    case noSpaceOnWrite = "ENOSPC on write"
    case ioErrorOnWrite = "EIO on write"
    case ioErrorOnSync = "EIO on fsync"
    case noSpaceOnSync = "ENOSPC on fsync"
    case crash = "crash (unsynced bytes lost in order, the last write torn)"
    case crashPages = "crash (unsynced 4 KiB pages lost each on its own, as AsyncFileNonDurable)"
    case bitRot = "a durable byte of a record flipped before a restart"
    case bitRotSealed = "a durable byte of a sealed segment or its seal flipped before a restart"
    case bitRotSnapshot = "a durable byte of a snapshot flipped before a restart"
    case passcodeStoreFull = "the passcode store's write fails (set-passcode)"

    public static func < (lhs: DiskFault, rhs: DiskFault) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Its name in `Figures.record`.
    public var key: String {
        switch self {
        case .tornWrite: "torn-write"
        case .noSpaceOnWrite: "enospc-write"
        case .ioErrorOnWrite: "eio-write"
        case .ioErrorOnSync: "eio-fsync"
        case .noSpaceOnSync: "enospc-fsync"
        case .crash: "crash"
        case .crashPages: "crash-pages"
        case .bitRot: "bit-rot"
        case .bitRotSealed: "bit-rot-sealed"
        case .bitRotSnapshot: "bit-rot-snapshot"
        case .passcodeStoreFull: "passcode-store-full"
        }
    }
}
