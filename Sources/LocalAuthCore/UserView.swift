// A user as the rules read it in place: what `UserTable.withUser` lends a
// rule for the fields of one can-evaluate. Non-copyable and lent borrowing
// to a non-escaping closure, so a rule can neither keep it nor let it
// outlive the loan (the compiler refuses both), and it has only getters.
//
// Why not lend the UserState itself: Swift 6.3 copies a struct read out of a
// collection when it is passed on, through a borrowing parameter too (a
// memcpy and atomic retains and releases of its String and array; callgrind:
// +180 instructions per can-evaluate through the array's Span, +220 through a
// buffer's subscript). The view is one pointer in a register: the unsafe
// access stays in this file and UserTable, out of the rules' sight.

public struct UserView: ~Copyable {
    private let storage: UnsafePointer<UserState>

    init(_ storage: UnsafePointer<UserState>) { self.storage = storage }

    public var passcodeSet: Bool { storage.pointee.passcodeSet }
    public var hasTemplates: Bool { !storage.pointee.templates.isEmpty }
    public var biometryLockedOut: Bool { storage.pointee.biometryLockedOut }
    public var adminLocked: Bool { storage.pointee.adminLocked }
    public var lastPasscodeSuccess: Int64? { storage.pointee.lastPasscodeSuccess }
    public var domainState: DomainState { storage.pointee.domainState }

    /// Whether the last passcode success was in boot `bootID` (S-11), read
    /// where the String lies.
    public func lastPasscodeWasInBoot(_ bootID: String) -> Bool { storage.pointee.lastPasscodeBootID == bootID }
}
