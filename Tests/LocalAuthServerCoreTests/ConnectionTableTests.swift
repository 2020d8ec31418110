// The connection table (the core's connections, the shell's sockets) against a Dictionary, through inserts and removes
// that collide and wrap around (ids chosen to share home slots).
import LocalAuthSeeded
import LocalAuthSystem
import XCTest
@testable import LocalAuthServer

final class ConnectionTableTests: XCTestCase {
    func test_theTableAgreesWithADictionaryThroughCollidingInsertsAndRemoves() {
        let table = ConnectionTable<FileDescriptor>(capacity: 16)
        var model: [UInt64: Int32] = [:]
        var random = SeededGenerator(seed: 0x9E37_79B9_7F4A_7C15)
        func next() -> UInt64 { random.next() }
        for step in 0..<20_000 {
            // Ids 16... in a narrow window, many sharing a slot modulo the size.
            let id = 16 + next() % 96
            if next() % 3 == 0 {
                XCTAssertEqual(table.remove(id)?.rawValue, model.removeValue(forKey: id), "step \(step)")
            } else {
                let fd = Int32(truncatingIfNeeded: next() % 60_000)
                table.insert(FileDescriptor(rawValue: fd), for: id)
                model[id] = fd
            }
            XCTAssertEqual(table.count, model.count, "step \(step)")
            if step % 97 == 0 {
                for probe in UInt64(16)..<112 { XCTAssertEqual(table[probe]?.rawValue, model[probe], "step \(step) id \(probe)") }
                XCTAssertEqual(table.values.map(\.rawValue).sorted(), model.values.sorted(), "step \(step)")
                XCTAssertEqual(table.keys.sorted(), model.keys.sorted(), "step \(step)")
            }
        }
        // Shrunk to fit, the same entries.
        let fitted = table.resizedToFit()
        for probe in UInt64(16)..<112 { XCTAssertEqual(fitted[probe]?.rawValue, model[probe], "fitted, id \(probe)") }
        // Shrunk in place (grown first so that it has room to give back), the same entries.
        let roomy = ConnectionTable<FileDescriptor>(capacity: 8192)
        for (id, fd) in model { roomy.insert(FileDescriptor(rawValue: fd), for: id) }
        roomy.shrinkToFit()
        XCTAssertEqual(roomy.capacity, 1024)
        XCTAssertEqual(roomy.count, model.count)
        for probe in UInt64(16)..<112 { XCTAssertEqual(roomy[probe]?.rawValue, model[probe], "shrunk, id \(probe)") }
        // The subscript's setter: nil removes.
        table[16] = FileDescriptor(rawValue: 7)
        XCTAssertEqual(table[16]?.rawValue, 7)
        table[16] = nil
        XCTAssertNil(table[16])
        table.removeAll()
        XCTAssertEqual(table.count, 0)
        XCTAssertNil(table[16])
    }
}

extension ConnectionTableTests {
    func test_givenIDZero_thenItIsNeverFoundNorRemovedAndInPlaceEditsChangeTheStoredValue() {
        // 0 marks an empty slot; a passcode job whose requester is gone carries it.
        let table = ConnectionTable<[Int]>(capacity: 16)
        table[16] = [1]
        XCTAssertNil(table[0])
        XCTAssertFalse(table.contains(0))
        XCTAssertNil(table.withValue(0) { $0.append(9) })
        XCTAssertNil(table.remove(0))
        XCTAssertEqual(table.count, 1, "removing 0 did not unbalance the count")
        // In place: the stored value changes (optional chaining, withValue), absent ids add nothing.
        table[16]?.append(2)
        table.withValue(16) { $0.append(3) }
        table[32]?.append(4)
        XCTAssertEqual(table[16], [1, 2, 3])
        XCTAssertNil(table[32])
        XCTAssertEqual(table.count, 1)
    }
}

extension ConnectionTableTests {
    /// The table holds its values in memory it manages itself (moves on
    /// removal, rehash on growth and shrink, in-place edits): with a value
    /// that counts its instances, every value it took is released exactly
    /// once, none early (each still reads its own id), none kept after
    /// removeAll or the table's end. A lost or doubled move fails the count
    /// (and under -sanitize=address, the use or free of a stale one).
    func test_givenValuesThatCountThemselves_whenInsertedMovedAndRemoved_thenEachIsReleasedExactlyOnce() {
        final class Tracked {
            nonisolated(unsafe) static var live = 0
            let id: UInt64
            init(_ id: UInt64) { self.id = id; Tracked.live += 1 }
            deinit { Tracked.live -= 1 }
        }
        struct Value { var tracked: Tracked; var edits: [UInt64] }
        var random = SeededGenerator(seed: 0x2545_F491_4F6C_DD1D)
        func next() -> UInt64 { random.next() }
        do {
            let table = ConnectionTable<Value>(capacity: 16)
            var model: [UInt64: Int] = [:]
            for step in 0..<20_000 {
                let id = 16 + next() % 200
                switch next() % 5 {
                case 0: XCTAssertEqual(table.remove(id)?.tracked.id, model.removeValue(forKey: id).map { _ in id }, "step \(step)")
                case 1:
                    table[id] = nil
                    model[id] = nil
                case 2:
                    table[id]?.edits.append(id)
                    table.withValue(id) { $0.edits.append(id) }
                    if model[id] != nil { model[id]! += 2 }
                default:
                    table.insert(Value(tracked: Tracked(id), edits: []), for: id)
                    model[id] = 0
                }
                XCTAssertEqual(Tracked.live, model.count, "step \(step): values alive")
                if step % 1_000 == 999 { table.shrinkToFit() }
            }
            for (id, edits) in model {
                XCTAssertEqual(table[id]?.tracked.id, id)
                XCTAssertEqual(table[id]?.edits, Array(repeating: id, count: edits))
            }
            let fitted = table.resizedToFit()
            XCTAssertEqual(Tracked.live, model.count, "a resized copy shares the values")
            fitted.removeAll()
            XCTAssertEqual(Tracked.live, model.count, "the original still holds them")
            table.removeAll()
            XCTAssertEqual(Tracked.live, 0, "removeAll releases every value")
            for id in model.keys { table.insert(Value(tracked: Tracked(id), edits: []), for: id) }
            XCTAssertEqual(Tracked.live, model.count)
        }
        XCTAssertEqual(Tracked.live, 0, "the table's end releases every value")
    }
}
