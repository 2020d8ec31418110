// Apple's `LAEnvironment.State` and its mechanisms (LAEnvironmentState.h,
// LAEnvironmentMechanism*.h), made from the daemon's STATE line:
// `uid=N biometry=T enrolled=N passcode-set=B locked-out=B domain-state=HEX|""`.
//
// - biometry: nil when the machine has no sensor (`biometry=none`), as Apple's
//   is nil "if biometry is not supported". `isUsable` follows S-18: a
//   passcode is set, something is enrolled and biometry is not locked out.
//   `stateHash` is the S-10 token (empty Data while nothing is enrolled).
//   `builtInSensorInaccessible` is false: no lid closes over this sensor.
// - userPassword: the daemon's passcode; `isSet` and `isUsable` are passcode-set.
// - companions: none exist here (S-18).

import Foundation
import LocalAuthProtocol

@available(macOS 15.0, iOS 18.0, *)
extension LAEnvironment {
    /// Apple's `LAEnvironment.Mechanism` (Objective-C `LAEnvironmentMechanism`).
    public class Mechanism: NSObject, @unchecked Sendable {
        public let isUsable: Bool
        public let localizedName: String
        /// An SF Symbols name, as Apple's (`touchid`, `faceid`, `opticid`, `key`).
        public let iconSystemName: String

        init(isUsable: Bool, localizedName: String, iconSystemName: String) {
            self.isUsable = isUsable
            self.localizedName = localizedName
            self.iconSystemName = iconSystemName
        }
    }

    /// Apple's `LAEnvironment.MechanismBiometry` (Objective-C `LAEnvironmentMechanismBiometry`).
    public final class MechanismBiometry: Mechanism, @unchecked Sendable {
        public let biometryType: LABiometryType
        public let isEnrolled: Bool
        public let isLockedOut: Bool
        public let stateHash: Data
        public let builtInSensorInaccessible: Bool

        init(biometryType: LABiometryType, isEnrolled: Bool, isLockedOut: Bool, passcodeSet: Bool, stateHash: Data) {
            self.biometryType = biometryType
            self.isEnrolled = isEnrolled
            self.isLockedOut = isLockedOut
            self.stateHash = stateHash
            builtInSensorInaccessible = false
            let (name, icon): (String, String) = switch biometryType {
            case .faceID: ("Face ID", "faceid")
            case .opticID: ("Optic ID", "opticid")
            default: ("Touch ID", "touchid")
            }
            super.init(isUsable: isEnrolled && !isLockedOut && passcodeSet, localizedName: name, iconSystemName: icon)
        }
    }

    /// Apple's `LAEnvironment.MechanismUserPassword` (Objective-C `LAEnvironmentMechanismUserPassword`).
    public final class MechanismUserPassword: Mechanism, @unchecked Sendable {
        public let isSet: Bool

        init(isSet: Bool) {
            self.isSet = isSet
            super.init(isUsable: isSet, localizedName: "Passcode", iconSystemName: "key")
        }
    }

    /// Apple's `LAEnvironment.MechanismCompanion` (Objective-C `LAEnvironmentMechanismCompanion`).
    public final class MechanismCompanion: Mechanism, @unchecked Sendable {
        public let type: LACompanionType
        public let stateHash: Data?

        init(type: LACompanionType) {
            self.type = type
            stateHash = nil
            super.init(isUsable: false, localizedName: type == .watch ? "Apple Watch" : "Mac", iconSystemName: "applewatch")
        }
    }
}

@available(macOS 15.0, iOS 18.0, *)
extension LAEnvironment {
    /// Apple's `LAEnvironment.State` (Objective-C `LAEnvironmentState`).
    public final class State: NSObject, NSCopying, @unchecked Sendable {
        public let biometry: MechanismBiometry?
        public let userPassword: MechanismUserPassword?
        /// Paired companions: none exist here.
        public let companions: [MechanismCompanion]

        /// The STATE line's fields, kept for comparison (a change is any field's).
        let fields: [String]

        init(_ arguments: Arguments) {
            let value = { (key: String) in arguments.value(for: key) ?? "" }
            let type = LABiometryType(wireName: value("biometry"))
            let enrolled = (Int(value("enrolled")) ?? 0) > 0
            let passcodeSet = value("passcode-set") == "true"
            biometry = type == .none ? nil : MechanismBiometry(
                biometryType: type, isEnrolled: enrolled, isLockedOut: value("locked-out") == "true",
                passcodeSet: passcodeSet, stateHash: Data(hex: value("domain-state")) ?? Data())
            userPassword = MechanismUserPassword(isSet: passcodeSet)
            companions = []
            fields = ["biometry", "enrolled", "passcode-set", "locked-out", "domain-state"].map(value)
        }

        private override init() {
            biometry = nil
            userPassword = nil
            companions = []
            fields = []
        }

        /// The daemon could not be reached: no mechanisms.
        static var unreachable: State { State() }

        /// Every mechanism: biometry, the user password, the companions.
        public var allMechanisms: [Mechanism] {
            [biometry, userPassword].compactMap { $0 } + companions
        }

        /// Immutable: a copy is the same object, as for Apple's.
        public func copy(with zone: NSZone? = nil) -> Any { self }

        public override func isEqual(_ object: Any?) -> Bool {
            (object as? State)?.fields == fields
        }

        public override var hash: Int { fields.hashValue }
    }
}
