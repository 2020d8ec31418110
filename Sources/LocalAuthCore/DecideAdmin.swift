// Administration (S-9, S-10, S-35): enrollment changes. Who may do what is
// the daemon's check (it knows the peer); the facts are recorded here with
// the administrator's uid.

extension Decision {
    mutating func enroll(uid: UserID, template: String, by: UserID, domainState: String) throws {
        guard rules.biometryType != .none else {
            throw Rejection(.badState, "No biometric sensor is configured (Type=none).")
        }
        guard !template.isEmpty else { throw Rejection(.badArgument, "Template names cannot be empty.") }
        let templates = state.user(uid).templates
        guard !templates.contains(template) else {
            throw Rejection(.badArgument, "Template \"\(template)\" is already enrolled for uid \(uid).")
        }
        emit(.enrollmentChanged(uid: uid, templates: templates + [template], by: by, domainState: domainState))
    }

    /// S-43: the recorded set follows fprintd's; the same set changes nothing
    /// (and keeps the domain state, S-10).
    mutating func fingersListed(uid: UserID, fingers: [String], by: UserID, domainState: String) throws {
        guard fingers != state.user(uid).templates else { return }
        emit(.enrollmentChanged(uid: uid, templates: fingers, by: by, domainState: domainState, source: .fprintd))
    }

    mutating func unenroll(uid: UserID, template: String?, by: UserID, domainState: String) throws {
        let templates = state.user(uid).templates
        var remaining: [String] = []
        if let template {
            guard templates.contains(template) else {
                throw Rejection(.badArgument, "Template \"\(template)\" is not enrolled for uid \(uid).")
            }
            remaining = templates.filter { $0 != template }
        }
        // Removing nothing changes nothing, and keeps the domain state (S-10).
        guard remaining != templates else { return }
        emit(.enrollmentChanged(uid: uid, templates: remaining, by: by, domainState: domainState))
    }
}
