// iOS code written from Apple's documentation pages compiles here unchanged
// (issue 33 item 1): a probe that uses LAEnvironment's Swift names exactly as
// developer.apple.com spells them (`LAEnvironment.Observer` and its
// `environment(_:stateDidChangeFromOldState:)`, `LAEnvironment.State`,
// `LAEnvironment.Mechanism`, `.MechanismBiometry`, `.MechanismUserPassword`,
// `.MechanismCompanion` and each of their properties) is type-checked against
// the built module in Swift 5 and Swift 6 mode with no diagnostic at all; the
// Objective-C names, which Apple's Swift overlay renames, give Apple's
// "has been renamed" error.
import Foundation
import LocalAuthTestSupport
import XCTest

final class AppleNamesProbeTests: XCTestCase {
    static let environmentProbe = """
        import Foundation
        import LocalAuthentication

        final class EnrollmentWatcher: NSObject, LAEnvironment.Observer {
            var changes = 0
            func environment(_ environment: LAEnvironment, stateDidChangeFromOldState oldState: LAEnvironment.State) {
                changes += 1
                let state: LAEnvironment.State = environment.state
                let all: [LAEnvironment.Mechanism] = state.allMechanisms
                for mechanism in all {
                    let _: (Bool, String, String) = (mechanism.isUsable, mechanism.localizedName, mechanism.iconSystemName)
                }
                if let biometry: LAEnvironment.MechanismBiometry = state.biometry {
                    let _: LABiometryType = biometry.biometryType
                    let _: (Bool, Bool, Bool) = (biometry.isEnrolled, biometry.isLockedOut, biometry.builtInSensorInaccessible)
                    let _: Data = biometry.stateHash
                    if biometry.stateHash != oldState.biometry?.stateHash { print("enrollment changed") }
                }
                if let password: LAEnvironment.MechanismUserPassword = state.userPassword {
                    let _: Bool = password.isSet
                }
                let companions: [LAEnvironment.MechanismCompanion] = state.companions
                for companion in companions {
                    let _: LACompanionType = companion.type
                    let _: Data? = companion.stateHash
                }
            }
        }

        /// The method is optional in Apple's protocol: an observer may leave it out.
        final class SilentObserver: NSObject, LAEnvironment.Observer {}

        func watch() {
            let environment: LAEnvironment = LAEnvironment.currentUser
            let watcher = EnrollmentWatcher()
            environment.addObserver(watcher)
            environment.removeObserver(watcher)
            environment.addObserver(SilentObserver())
        }
        """

    /// Each Objective-C name and the Swift name Apple's overlay gives it.
    static let renamed = [
        ("LAEnvironmentObserver", "LAEnvironment.Observer"),
        ("LAEnvironmentState", "LAEnvironment.State"),
        ("LAEnvironmentMechanism", "LAEnvironment.Mechanism"),
        ("LAEnvironmentMechanismBiometry", "LAEnvironment.MechanismBiometry"),
        ("LAEnvironmentMechanismUserPassword", "LAEnvironment.MechanismUserPassword"),
        ("LAEnvironmentMechanismCompanion", "LAEnvironment.MechanismCompanion"),
    ]

    func test_the_probe_written_from_Apples_pages_compiles_with_no_diagnostic() throws {
        for mode in ["5", "6"] {
            let (status, diagnostics) = try typecheck(Self.environmentProbe, mode: mode)
            XCTAssertEqual(status, 0, "Swift \(mode): \(diagnostics)")
            XCTAssertEqual(diagnostics, [], "Swift \(mode)")
        }
    }

    func test_the_Objective_C_names_are_renamed_as_in_Apples_overlay() throws {
        for (objectiveC, swift) in Self.renamed {
            let (status, diagnostics) = try typecheck("import LocalAuthentication\nlet x: \(objectiveC)? = nil\n", mode: "5")
            XCTAssertNotEqual(status, 0, objectiveC)
            XCTAssertTrue(diagnostics.contains { $0.contains("'\(objectiveC)' has been renamed to '\(swift)'") },
                          "\(objectiveC): \(diagnostics)")
        }
    }

    /// swiftc's exit status and its warning and error lines for `source`.
    private func typecheck(_ source: String, mode: String) throws -> (Int32, [String]) {
        let directory = TemporaryDirectory()
        let file = directory.path + "/probe.swift"
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let (status, output) = try SeedVerbatimTests.typecheck(file, mode: mode, moduleName: "probe")
        let diagnostics = output.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix(file) && ($0.contains(": warning:") || $0.contains(": error:")) }
        return (status, diagnostics)
    }
}
