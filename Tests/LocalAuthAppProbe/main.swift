// An app, for the session agents' tests (S-66, S-69): it evaluates a policy
// with a plain `LAContext()` and no prompt handler, as an iOS app would, so
// its prompts go to its session's agent. It waits for a line on standard
// input before it starts (the test first puts its pid in a logind session)
// and for another before it exits (the test scans its memory meanwhile).
//
//   localauth-app-probe SOCKET POLICY REASON
//
// Prints "pid N", then "OK METHOD" or "ERR NAME CODE".
import Foundation
import LocalAuthentication

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func main() {
    let arguments = CommandLine.arguments
    guard arguments.count == 4 else {
        FileHandle.standardError.write(Data("usage: localauth-app-probe SOCKET POLICY REASON\n".utf8))
        exit(2)
    }
    let policy: LAPolicy = arguments[2] == "biometrics" ? .deviceOwnerAuthenticationWithBiometrics : .deviceOwnerAuthentication
    say("pid \(getpid())")
    _ = readLine()
    let context = LAContext(socketPath: arguments[1])
    let done = DispatchSemaphore(value: 0)
    let result = Outcome()
    context.evaluatePolicy(policy, localizedReason: arguments[3]) { success, error in
        let laError = error as? LAError
        result.text = success ? "OK" : "ERR \(laError?.code.name ?? String(describing: error)) \(laError?.code.rawValue ?? 0)"
        done.signal()
    }
    done.wait()
    say(result.text == "OK" ? "OK \(context.evaluatedMethod ?? "?")" : result.text)
    _ = readLine()
}

final class Outcome: @unchecked Sendable {
    var text = ""
}

main()
