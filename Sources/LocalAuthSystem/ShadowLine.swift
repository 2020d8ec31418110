// A user's whole line of the shadow file, for the login secret's binding
// (S-74, S-76): the copy of a password is bound to the line it was checked
// against, so that any change of it (passwd, a lock, an aging change) voids
// the copy. The line is handed to `body` inside the file's buffer, which
// `withContents` wipes: no String or copy of the hash is made here.
extension ShadowFile {
    /// The first line of `name` (as `hash(for:in:)` finds it), without its LF,
    /// and its hash field, for as long as `body` runs; nil when there is none.
    public static func withLine<T>(for name: String, in bytes: [UInt8],
                                   _ body: (_ line: ArraySlice<UInt8>, _ hash: ArraySlice<UInt8>) -> T) -> T? {
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if let (found, hash) = fields(line), found == name { return body(line, hash) }
        }
        return nil
    }
}
