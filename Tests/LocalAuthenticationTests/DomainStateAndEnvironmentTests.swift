// LADomainState, LAEnvironment and maxBiometryFailures against a live
// daemon: the domain state follows enrollment (S-10), the environment's
// observers hear lockout and reset, and the environment reads each field of
// the daemon's STATE line.
import Foundation
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

/// Collects `environment(_:stateDidChangeFromOldState:)` calls (Apple's spelling); waits for the next.
final class RecordingObserver: NSObject, LAEnvironment.Observer, @unchecked Sendable {
    private let lock = NSLock()
    private let arrived = DispatchSemaphore(value: 0)
    private var changes: [(old: LAEnvironment.State, new: LAEnvironment.State)] = []

    func environment(_ environment: LAEnvironment, stateDidChangeFromOldState oldState: LAEnvironment.State) {
        lock.withLock { changes.append((oldState, environment.state)) }
        arrived.signal()
    }

    /// The next change until `matches` holds for its new state (safety net 15 s).
    func waitFor(file: StaticString = #filePath, line: UInt = #line,
                 _ matches: (LAEnvironment.State) -> Bool) -> (old: LAEnvironment.State, new: LAEnvironment.State)? {
        while arrived.wait(timeout: .now() + 15) == .success {
            let change = lock.withLock { changes.removeFirst() }
            if matches(change.new) { return change }
        }
        XCTFail("no matching state change (safety net)", file: file, line: line)
        return nil
    }
}

final class DomainStateAndEnvironmentTests: LiveTestCase {
    func testDomainStateFollowsEnrollment() throws {
        try prepareOwner(enroll: false)
        let context = LAContext()
        XCTAssertNil(context.domainState.biometry.stateHash, "nothing checked yet")
        XCTAssertEqual(context.domainState.biometry.biometryType, .none, "S-17")
        let token = try admin.ok("enroll uid=0")["domain-state"]
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil))
        let first = context.domainState
        XCTAssertEqual(first.biometry.biometryType, .touchID)
        XCTAssertEqual(first.biometry.stateHash.map(hex), token, "the S-10 token as Data")
        XCTAssertEqual(first.stateHash, first.biometry.stateHash)
        XCTAssertTrue(first.companion.availableCompanionTypes.isEmpty)
        XCTAssertNil(first.companion.stateHash)
        XCTAssertNil(first.companion.stateHash(for: .mac))

        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil))
        XCTAssertEqual(context.domainState.biometry.stateHash, first.biometry.stateHash, "unchanged set, same hash")
        try admin.ok("enroll uid=0 template=left-thumb")
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil))
        XCTAssertNotEqual(context.domainState.biometry.stateHash, first.biometry.stateHash, "S-10: an enroll changes it")
        XCTAssertNotNil(context.domainState.biometry.stateHash)
    }

    func testEnvironmentReadsTheDaemonsState() throws {
        let environment = LAEnvironment(socketPath: daemon.socketPath)
        let empty = environment.state
        XCTAssertEqual(empty.biometry?.biometryType, .touchID)
        XCTAssertEqual(empty.biometry?.isEnrolled, false)
        XCTAssertEqual(empty.biometry?.isUsable, false)
        XCTAssertEqual(empty.userPassword?.isSet, false)
        XCTAssertTrue(empty.companions.isEmpty)
        XCTAssertEqual(empty.allMechanisms.count, 2)

        let observer = RecordingObserver()
        environment.addObserver(observer)
        try prepareOwner()
        guard let enrolled = observer.waitFor({ $0.biometry?.isEnrolled == true }) else { return }
        XCTAssertEqual(enrolled.new.biometry?.isUsable, true)
        XCTAssertEqual(enrolled.new.userPassword?.isSet, true)
        XCTAssertEqual(enrolled.new.biometry?.stateHash.count, 16)
        XCTAssertEqual(enrolled.new.biometry?.builtInSensorInaccessible, false)
        XCTAssertEqual(environment.state.biometry?.stateHash, enrolled.new.biometry?.stateHash)
        environment.removeObserver(observer)
    }

    func testObserverFiresOnLockoutAndReset() throws {
        try prepareOwner()
        let environment = LAEnvironment(socketPath: daemon.socketPath)
        let observer = RecordingObserver()
        environment.addObserver(observer)
        XCTAssertEqual(environment.state.biometry?.isLockedOut, false)
        try lockOut()
        guard let locked = observer.waitFor({ $0.biometry?.isLockedOut == true }) else { return }
        XCTAssertEqual(locked.old.biometry?.isLockedOut, false)
        XCTAssertEqual(locked.new.biometry?.isUsable, false)
        try admin.ok("reset uid=0")
        guard let reset = observer.waitFor({ $0.biometry?.isLockedOut == false }) else { return }
        XCTAssertEqual(reset.old.biometry?.isLockedOut, true)
        XCTAssertEqual(reset.new.biometry?.isUsable, true)
    }

    /// Issue 33: an observer written with Apple's spelling
    /// (`environment(_:stateDidChangeFromOldState:)`) is called for each kind
    /// of change: a passcode set, an enrollment, a lockout, a reset.
    func testAppleSpelledObserverHearsPasscodeEnrollmentLockoutAndReset() throws {
        let environment = LAEnvironment(socketPath: daemon.socketPath)
        let observer = RecordingObserver()
        environment.addObserver(observer)
        XCTAssertEqual(environment.state.userPassword?.isSet, false)
        try admin.ok("set-passcode secret=1234")
        guard let passcode = observer.waitFor({ $0.userPassword?.isSet == true }) else { return }
        XCTAssertEqual(passcode.old.userPassword?.isSet, false)
        try admin.ok("enroll uid=0 template=right-index")
        guard let enrolled = observer.waitFor({ $0.biometry?.isEnrolled == true }) else { return }
        XCTAssertEqual(enrolled.old.biometry?.isEnrolled, false)
        XCTAssertNotEqual(enrolled.new.biometry?.stateHash, enrolled.old.biometry?.stateHash)
        try lockOut()
        guard let locked = observer.waitFor({ $0.biometry?.isLockedOut == true }) else { return }
        XCTAssertEqual(locked.old.biometry?.isLockedOut, false)
        try admin.ok("reset uid=0")
        guard let reset = observer.waitFor({ $0.biometry?.isLockedOut == false }) else { return }
        XCTAssertEqual(reset.old.biometry?.isLockedOut, true)
        environment.removeObserver(observer)
    }

    func testCurrentUserIsTheProcessUsersEnvironment() throws {
        try prepareOwner()
        XCTAssertEqual(LAEnvironment.currentUser.state.userPassword?.isSet, true)
        XCTAssertTrue(LAEnvironment.currentUser === LAEnvironment.currentUser)
    }

    func testUnreachableDaemonMeansNoMechanisms() {
        let environment = LAEnvironment(socketPath: "/nonexistent/localauthd.socket")
        XCTAssertNil(environment.state.biometry)
        XCTAssertNil(environment.state.userPassword)
        XCTAssertTrue(environment.state.allMechanisms.isEmpty)
    }

    func testMaxBiometryFailuresIsTheLockoutThreshold() {
        XCTAssertEqual(LAContext().maxBiometryFailures, 5)
        XCTAssertNil(LAContext(socketPath: "/nonexistent/localauthd.socket").maxBiometryFailures)
    }

    func testCredentialStaysOnTheContext() throws {
        let context = LAContext()
        XCTAssertFalse(context.isCredentialSet(.applicationPassword))
        XCTAssertTrue(context.setCredential(Data("app-secret-4711".utf8), type: .applicationPassword))
        XCTAssertTrue(context.isCredentialSet(.applicationPassword))
        XCTAssertFalse(context.isCredentialSet(.smartCardPIN))
        XCTAssertTrue(context.setCredential(nil, type: .applicationPassword))
        XCTAssertFalse(context.isCredentialSet(.applicationPassword))
        // Never sent: the daemon's log does not hold it.
        _ = try admin.ok("ping")
        XCTAssertFalse(try logBytes().contains(Array("app-secret-4711".utf8)))
    }

    /// Every file of the daemon's state directory, concatenated.
    func logBytes() throws -> [UInt8] {
        var bytes: [UInt8] = []
        let root = daemon.stateDirectory
        guard let files = FileManager.default.enumerator(atPath: root) else { throw XCTSkip("no state directory") }
        for case let path as String in files {
            var isDirectory: ObjCBool = false
            let full = root + "/" + path
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
               let data = FileManager.default.contents(atPath: full) {
                bytes += data
            }
        }
        return bytes
    }
}

func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

extension Array where Element == UInt8 {
    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if Array(self[start..<start + needle.count]) == needle { return true }
        }
        return false
    }
}
