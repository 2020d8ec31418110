// The connection table (the core's connections, the shell's sockets) against a Dictionary, through inserts and removes
// that collide and wrap around (ids chosen to share home slots).
import LocalAuthSystem
import XCTest
@testable import LocalAuthServer

final class ConnectionTableTests: XCTestCase {
    func test_theTableAgreesWithADictionaryThroughCollidingInsertsAndRemoves() {
        let table = ConnectionTable<FileDescriptor>(capacity: 16)
        var model: [UInt64: Int32] = [:]
        var random = UInt64(0x9E37_79B9_7F4A_7C15)
        func next() -> UInt64 {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return random
        }
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
