// localauthctl for these tests (the daemon is LocalAuthTestSupport's
// DaemonProcess): `ctl(...)` runs localauthctl as a whole command line (stdin from a string,
// stdout and stderr captured). The test process is root, the administrator.
// Timeouts here are safety nets only, never assertions.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

/// localauthctl, next to the daemon binary.
func ctlBinary() throws -> String {
    try Binary.find("localauthctl")
}

struct CtlResult {
    var code: Int32
    var out: String
    var err: String
    var lines: [String] { out.split(separator: "\n").map(String.init) }
}

/// Runs `localauthctl ARGS` to completion (safety net 60 s), stdin from `input`.
func ctl(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> CtlResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try ctlBinary())
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["PAGER"] = "cat"
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    let err = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CtlResult(code: process.terminationStatus, out: String(decoding: out, as: UTF8.self),
                     err: String(decoding: err, as: UTF8.self))
}

/// One JSON object per line.
func jsonObject(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
        XCTFail("not a JSON object: \(text)", file: file, line: line)
        return [:]
    }
    return object
}
