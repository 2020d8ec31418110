// Fuzz target for the log decoder (FORMAT.md); FuzzProperty.swift says who
// calls it. It reaches the segment format (SegmentHeader, RecordFormat,
// SnapshotStore's codec) through the log's `package` declarations.
//
// The bytes go to real files in a private temp directory (on /dev/shm when it
// exists), because LogReader, EventLog.open and verify read files. Modes
// (first byte % 4):
//   0  raw segment: the rest is `log/0000000000000001.seg`;
//   1  patched segment: like 0, but a valid header is put in front and every
//      record's seq and CRC are fixed up as the bytes are walked, so the
//      fuzzer reaches the flags, keys, chain and payload decoding paths;
//   2  snapshot: bytes 1..<9 = seq, the rest a payload; written as a valid
//      snapshot file (and, when byte 0 & 0x80, damaged at a fuzzed offset),
//      then SnapshotStore.load + StateCodec.decode;
//   3  truncation property: the rest is a list of (kind, payload) records,
//      encoded into a valid segment by the real encoder, then cut at a fuzzed
//      length. A cut may only ever read as records then `end` or `tornTail`,
//      never as corruption, and never lose a record that is complete.
// Every record read is decoded with EventCodec and folded into an AuthState,
// as StateLoader does at start; verify runs over the same directory.
import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

nonisolated(unsafe) private var fuzzDirectory: String?

/// Work in `directory` (it must exist) instead of a directory of its own
/// made on first use and never removed (what a fuzzing process wants).
public func logFuzzWork(in directory: String) {
    mkdir(directory + "/log", 0o700)
    mkdir(directory + "/snapshots", 0o700)
    fuzzDirectory = directory
}

private func workDirectory() -> String {
    if let fuzzDirectory { return fuzzDirectory }
    let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    var template = Array("\(base)/localauthd-logfuzz-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil, "mkdtemp failed")
    let path = String(cString: made!)
    fuzzDirectory = path
    mkdir(path + "/log", 0o700)
    mkdir(path + "/snapshots", 0o700)
    return path
}

private func clear(_ directory: String) {
    for sub in ["/log", "/snapshots"] {
        guard let entries = try? Directory.entries(directory + sub) else { continue }
        for name in entries { unlink(directory + sub + "/" + name) }
    }
}

private func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "open \(path) failed")
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        precondition(n > 0, "write failed")
        offset += n
    }
    close(fd)
}

public func logFuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    let directory = workDirectory()
    clear(directory)
    let rest = Array(input.dropFirst())
    switch mode % 4 {
    case 0:
        writeFile(directory + "/log/" + SegmentName.fileName(1), rest)
        readAll(directory, expectNoCorruption: false)
    case 1:
        writeFile(directory + "/log/" + SegmentName.fileName(1), patchedSegment(rest))
        readAll(directory, expectNoCorruption: false)
    case 2:
        snapshot(directory, rest, damage: mode & 0x80 != 0)
    default:
        truncation(directory, rest)
    }
    return 0
}

/// A valid header, then the fuzzed bytes with each record's seq and CRC fixed.
private func patchedSegment(_ body: [UInt8]) -> [UInt8] {
    var bytes = SegmentHeader(firstSeq: 1, chainBefore: .zero).encoded() + body
    var offset = SegmentHeader.size
    var seq: UInt64 = 1
    while offset + RecordFormat.headerSize <= bytes.count {
        let length = bytes.withUnsafeBytes { Int(RecordFormat.u32($0, offset)) }
        guard length >= RecordFormat.fixedBodySize, offset + 8 + length <= bytes.count else { break }
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: seq.littleEndian, toByteOffset: offset + 8, as: UInt64.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(offset + 8)..<(offset + 8 + length)]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: offset + 4, as: UInt32.self)
        }
        offset += 8 + length
        seq += 1
    }
    return bytes
}

/// Reads the log as the daemon's start does; returns the records read.
@discardableResult
private func readAll(_ directory: String, expectNoCorruption: Bool) -> [UInt64] {
    var seqs: [UInt64] = []
    var state = AuthState()
    if let reader = try? LogReader(logDirectory: directory + "/log", chain: .full) {
        var steps = 0
        loop: while steps < 100_000 {
            steps += 1
            switch reader.next() {
            case .record(let record):
                require(record.seq == UInt64(seqs.count) + 1, "reader skipped or repeated a seq")
                seqs.append(record.seq)
                if let body = try? EventCodec.decode(kind: record.keys.type, payload: record.payload) {
                    state.apply(Event(time: record.time, body))
                }
            case .end, .tornTail:
                break loop
            case .corruption(let corruption):
                require(!expectNoCorruption, "a cut log read as corruption: \(corruption)")
                break loop
            }
        }
        // Once finished, the reader keeps answering the same.
        if case .record = reader.next() { require(false, "a record after the end") }
    }
    _ = StateCodec.encode(state)
    // The read-only open and verify must agree with the reader and never crash.
    if let log = try? EventLog.open(directory, options: EventLog.Options(readOnly: true)) {
        require(log.recovery.lastSeq == UInt64(seqs.count), "open and the reader disagree on the last seq")
    }
    _ = try? EventLog.verify(directory)
    return seqs
}

private func snapshot(_ directory: String, _ rest: [UInt8], damage: Bool) {
    guard rest.count >= 10 else { return }
    var seq: UInt64 = 0
    for i in 0..<8 { seq = seq << 8 | UInt64(rest[i]) }
    seq = seq % 1_000_000 + 1
    let payload = Array(rest[9...])
    var file = SnapshotStore.encode(seq: seq, chainHead: .zero, time: 0, payload: payload)
    if damage {
        let at = Int(rest[8]) * 7 % file.count
        file[at] ^= 0x5A
    }
    let store = SnapshotStore(directory: directory)
    writeFile(store.path(seq), file)
    switch store.load(seq) {
    case .success(let snapshot):
        require(!damage || file == SnapshotStore.encode(seq: seq, chainHead: .zero, time: 0, payload: payload),
                     "a damaged snapshot loaded")
        if let state = try? StateCodec.decode(snapshot.payload) {
            for uid in state.users.keys { _ = state.status(uid, now: 0) }
            require((try? StateCodec.decode(StateCodec.encode(state))) == state, "state round trip")
        }
    case .failure(let skipped):
        require(damage, "an intact snapshot was skipped: \(skipped)")
    }
    _ = SnapshotStore.decode(rest)
    _ = store.newestValid { _ in .zero }
}

private func truncation(_ directory: String, _ rest: [UInt8]) {
    guard rest.count >= 2 else { return }
    var bytes = SegmentHeader(firstSeq: 1, chainBefore: .zero).encoded()
    var ends: [Int] = []
    var offset = 2
    var seq: UInt64 = 1
    while offset + 2 <= rest.count && seq < 64 {
        let kind = UInt16(rest[offset] % UInt8(EventKind.allCases.count + 1))
        // At most 39 bytes: a payload can then never hold a whole record, which
        // FORMAT.md would (rightly) read as corruption rather than a torn tail.
        let length = min(Int(rest[offset + 1]) % 40, rest.count - offset - 2)
        let payload = Array(rest[(offset + 2)..<(offset + 2 + length)])
        offset += 2 + length
        payload.withUnsafeBytes { raw in
            RecordFormat.encode(seq: seq, time: Int64(seq), keys: RecordKeys(type: kind, uid: UInt32(seq % 3)), payload: raw, into: &bytes)
        }
        ends.append(bytes.count)
        seq += 1
    }
    let cutAt = SegmentHeader.size + (Int(rest[0]) << 8 | Int(rest[1])) % (bytes.count - SegmentHeader.size + 1)
    writeFile(directory + "/log/" + SegmentName.fileName(1), Array(bytes[..<cutAt]))
    let seqs = readAll(directory, expectNoCorruption: true)
    let complete = ends.filter { $0 <= cutAt }.count
    require(seqs.count == complete, "a cut at \(cutAt) read \(seqs.count) records, \(complete) are complete")
}
