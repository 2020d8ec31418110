// Fuzzing regressions (issue 8 item 2): every input in Tests/Fuzz/regressions
// (crashes found by scripts/fuzz) and in the seed corpora Tests/Fuzz/corpus
// runs through the fuzz targets' own entry points (LocalAuthFuzzTargets, the
// functions scripts/fuzz links into the libFuzzer binaries), in process and
// without sanitizers, so that CI keeps them fixed even where libFuzzer is not
// available. A violated property fails the test with the input's name.
import Foundation
import LocalAuthCore
import LocalAuthFuzzTargets
import LocalAuthTestSupport
import XCTest

final class FuzzRegressionTests: XCTestCase {
    static let fuzzDirectory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz").path
    }()

    func inputs(_ target: String) -> [(String, [UInt8])] {
        var result: [(String, [UInt8])] = []
        for kind in ["regressions", "corpus"] {
            let directory = Self.fuzzDirectory + "/\(kind)/\(target)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.sorted() { result.append(("\(kind)/\(target)/\(name)", readBytes(directory + "/" + name))) }
        }
        return result
    }

    /// Every input of `target` through `entry`, as libFuzzer would call it.
    func run(_ target: String, _ entry: (UnsafePointer<UInt8>, Int) -> Int32,
             file: StaticString = #filePath, line: UInt = #line) {
        let all = inputs(target)
        XCTAssertFalse(all.isEmpty, "no inputs for \(target) in \(Self.fuzzDirectory)", file: file, line: line)
        let trap = FuzzProperty.violated
        defer { FuzzProperty.violated = trap }
        var current = ""
        var violations = 0
        FuzzProperty.violated = { message in
            violations += 1
            XCTFail("\(current): \(message)", file: file, line: line)
        }
        for (name, bytes) in all {
            current = name
            // One spare byte: an empty input still has an address, as under libFuzzer.
            let buffer = bytes + [0]
            buffer.withUnsafeBufferPointer { _ = entry($0.baseAddress!, bytes.count) }
        }
        XCTAssertEqual(violations, 0, file: file, line: line)
    }

    func testProtocolInputs() {
        run("protocol", protocolFuzzOne)
    }

    func testConfigInputs() {
        run("config", configFuzzOne)
    }

    func testCodecInputs() {
        run("codec", codecFuzzOne)
    }

    func testLogInputs() throws {
        let directory = TemporaryDirectory()
        logFuzzWork(in: directory.path)
        run("log", logFuzzOne)
    }
}

/// The crash behind regressions/codec/F1-prompt-shown-for-unknown-context,
/// reduced: a `prompt-shown` record for a context the state does not hold
/// (a forged or damaged but CRC- and chain-valid log) puts the context in
/// `AuthState.prompting`; a snapshot of that state cannot be decoded again
/// ("implausible prompting count"), so every later start replays the whole log.
final class StateCodecRegressionTests: XCTestCase {
    func testPromptShownForAnUnknownContextKeepsTheStateEncodable() throws {
        var state = AuthState()
        let ghost = ContextID(high: 1, low: 2)
        let prompt = Prompt(kind: .biometric, attempt: 1, fallbackOffered: false, attemptsLeft: 0, message: nil)
        state.apply(Event(time: 1_000_000, .promptShown(uid: 1000, ctx: ghost, eval: 1, prompt: prompt)))
        let decoded = try? StateCodec.decode(StateCodec.encode(state))
        XCTAssertEqual(decoded, state, "StateCodec cannot round-trip the fold of a log holding prompt-shown for an unknown context")
    }
}
