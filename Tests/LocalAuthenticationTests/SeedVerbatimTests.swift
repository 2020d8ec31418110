// The seed articles' Swift exactly as printed (seed 000's `->`, `=`, `&`, `@`
// and quotes, lost when the article was scraped, restored; seed 001's class
// declaration line, which the article omits, added; UIKit's isBangScreen
// stubbed), compiled in Swift 5 mode against the built LocalAuthentication
// module: iOS code moves over unchanged. The only diagnostics allowed are
// "switch must be exhaustive" for LABiometryType.opticID, which Apple's
// iOS 17 SDK gives the same code. The text has one copy,
// Tests/LocalAuthenticationSeedTests/Seed00N.swift (a header comment, then
// the article's code), which SeedRunTests also runs against a live daemon;
// that target compiles with -suppress-warnings, so the diagnostics are pinned
// here by type-checking the same files again.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class SeedVerbatimTests: XCTestCase {
    static let seedDirectory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("LocalAuthenticationSeedTests").path
    }()

    static let seeds = ["seed000": "Seed000.swift", "seed001": "Seed001.swift", "seed002": "Seed002.swift"]

    func testSeedCodeCompilesUnchangedInSwift5Mode() throws {
        for (name, fileName) in Self.seeds.sorted(by: { $0.key < $1.key }) {
            let file = Self.seedDirectory + "/" + fileName
            XCTAssertTrue(FileManager.default.fileExists(atPath: file), file)
            let (status, output) = try Self.typecheck(file, mode: "5", moduleName: name)
            XCTAssertEqual(status, 0, "\(name) does not compile:\n\(output)")
            let diagnostics = output.split(separator: "\n").filter { $0.contains(": warning:") || $0.contains(": error:") }
            for line in diagnostics {
                XCTAssertTrue(line.contains("switch must be exhaustive"), "\(name): \(line)")
            }
        }
    }

    /// `swiftc -typecheck` of `file` against the built LocalAuthentication
    /// module in Swift `mode`: its exit status and everything it printed.
    /// Skips when no swiftc or no built module is there.
    static func typecheck(_ file: String, mode: String, moduleName: String) throws -> (Int32, String) {
        guard let swiftc = findSwiftc() else { throw XCTSkip("swiftc not on PATH") }
        let modules = URL(fileURLWithPath: try Binary.localauthd()).deletingLastPathComponent().appendingPathComponent("Modules").path
        guard FileManager.default.fileExists(atPath: modules + "/LocalAuthentication.swiftmodule") else {
            throw XCTSkip("no LocalAuthentication.swiftmodule in \(modules)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swiftc)
        // The module map of COpenSSL (libcrypto, under LocalAuthKeys), as
        // SwiftPM hands it to an app that depends on the LocalAuthentication product.
        let openSSL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/COpenSSL").path
        process.arguments = ["-typecheck", "-swift-version", mode, "-module-name", moduleName, "-I", modules, "-I", openSSL, file]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    static func findSwiftc() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for directory in path.split(separator: ":") where access("\(directory)/swiftc", X_OK) == 0 {
            return "\(directory)/swiftc"
        }
        return nil
    }
}
