// Reading an open EventLog: the index's positions of a context's or a
// user's records, the records at positions (unwritten ones from the writer's
// memory), the newest valid snapshot, a reader for replay, and chain[seq].
import Glibc
import LocalAuthCore
import LocalAuthSystem

extension EventLog {
    public func positions(context: ContextID) -> [LogPosition] {
        precondition(writer?.indexing != false, "history needs EventLog.Options.indexesAppends")
        let before = lazyIndex?.index.positions(context: context) ?? []
        guard let writer else { return before + readOnlyIndex.positions(context: context) }
        return before + writer.lock.withLock { writer.lock.state.index.positions(context: context) }
    }

    public func positions(uid: UserID) -> [LogPosition] {
        precondition(writer?.indexing != false, "history needs EventLog.Options.indexesAppends")
        let before = lazyIndex?.index.positions(uid: uid) ?? []
        guard let writer else { return before + readOnlyIndex.positions(uid: uid) }
        return before + writer.lock.withLock { writer.lock.state.index.positions(uid: uid) }
    }

    /// One context's records in log order, read by seeking (no scan).
    public func history(context: ContextID) throws(LogError) -> [StoredRecord] {
        try records(at: positions(context: context))
    }

    /// One user's records in log order.
    public func history(uid: UserID) throws(LogError) -> [StoredRecord] {
        try records(at: positions(uid: uid))
    }

    public func records(at positions: [LogPosition]) throws(LogError) -> [StoredRecord] {
        var result: [StoredRecord] = []
        result.reserveCapacity(positions.count)
        var open: SegmentFile?
        defer { open?.close() }
        for position in positions {
            if let bytes = writer?.unwrittenRecord(at: position) {
                result.append(try Self.decode(bytes, at: position))
                continue
            }
            let path = logDirectory + "/" + SegmentName.fileName(position.segment)
            if open?.path != path {
                open?.close()
                do throws(SystemError) { open = try SegmentFile.open(storage, path, .readOnly) } catch { throw .io(error) }
            }
            result.append(try Self.read(open!, at: position))
        }
        return result
    }

    public func record(at position: LogPosition) throws(LogError) -> StoredRecord {
        guard let record = try records(at: [position]).first else { throw .noRecord(position.description) }
        return record
    }

    private static func read(_ file: SegmentFile, at position: LogPosition) throws(LogError) -> StoredRecord {
        do {
            var prefix = [UInt8](repeating: 0, count: 8)
            var failure: SystemError?
            let got = prefix.withUnsafeMutableBytes { raw in
                do throws(SystemError) { return try file.preadFully(into: raw, at: position.offset) } catch {
                    failure = error
                    return 0
                }
            }
            if let failure { throw failure }
            guard got == 8 else { throw LogError.noRecord(position.description) }
            let length = prefix.withUnsafeBytes { Int(RecordFormat.u32($0, 0)) }
            guard length >= RecordFormat.fixedBodySize, length <= RecordFormat.maxBodySize else {
                throw LogError.noRecord(position.description)
            }
            var bytes = [UInt8](repeating: 0, count: 8 + length)
            let n = bytes.withUnsafeMutableBytes { raw in
                do throws(SystemError) { return try file.preadFully(into: raw, at: position.offset) } catch {
                    failure = error
                    return 0
                }
            }
            if let failure { throw failure }
            guard n == bytes.count else { throw LogError.noRecord(position.description) }
            return try decode(bytes, at: position)
        } catch let error as LogError {
            throw error
        } catch let error as SystemError {
            throw .io(error)
        } catch {
            throw .noRecord(position.description)
        }
    }

    static func decode(_ bytes: [UInt8], at position: LogPosition) throws(LogError) -> StoredRecord {
        let record: StoredRecord? = bytes.withUnsafeBytes { raw in
            guard raw.count >= RecordFormat.headerSize, Int(RecordFormat.u32(raw, 0)) + 8 == raw.count,
                  CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[8...])) == RecordFormat.u32(raw, 4)
            else { return nil }
            return StoredRecord(
                seq: RecordFormat.u64(raw, 8), time: Int64(bitPattern: RecordFormat.u64(raw, 16)),
                keys: RecordFormat.keys(raw), payload: Array(raw[RecordFormat.headerSize...]), position: position)
        }
        guard let record else { throw .noRecord(position.description) }
        return record
    }

    /// The newest snapshot that agrees with this log, and why newer ones were skipped.
    public func newestValidSnapshot() -> (snapshot: Snapshot?, skipped: [SkippedSnapshot]) {
        let last = lastSeq
        return snapshots.newestValid { seq in
            guard seq <= last else { return nil }
            return try? chainHead(at: seq)
        }
    }

    /// A reader over this log's directory (replay from `seq`).
    public func reader(from seq: UInt64 = 1, chain: ChainCheck = .none) throws(LogError) -> LogReader {
        do throws(SystemError) { return try LogReader(storage: storage, logDirectory: logDirectory, from: seq, chain: chain) } catch {
            throw .io(error)
        }
    }

    /// chain[seq], the value a snapshot at `seq` must carry. Waits until
    /// `seq` is durable; then the writer's head (when `seq` is the last
    /// durable one) or the one it kept (`Options.chainMarkEvery`), else
    /// recomputed from the segment that holds it.
    public func chainHead(at seq: UInt64) throws(LogError) -> ChainHead {
        if seq == 0 { return .zero }
        if let writer {
            try writer.waitDurable(seq)
            let fast: ChainHead? = writer.lock.withLock {
                writer.durable.load(ordering: .acquiring) == seq ? writer.lock.state.durableChain : nil
            }
            if let fast { return fast }
            if let marked = writer.markedChain(seq) { return marked }
        } else if seq == recovery.lastSeq {
            return readOnlyChain
        }
        let reader = try reader(from: seq, chain: .full)
        guard case .record(let record) = reader.next(), record.seq == seq, let head = reader.chainHead else {
            throw .noRecord("seq \(seq)")
        }
        return head
    }
}
