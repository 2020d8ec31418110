// The KEY=VALUE pairs of one message, in the order they were written. A
// message has a handful of them, so a small array with linear lookup beats a
// dictionary: no hashing, one allocation, order kept for round trips.

/// One `KEY=VALUE` pair; `value` is unescaped.
public struct Argument: Sendable, Equatable, Hashable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// The arguments of a request or response, in wire order, keys unique.
public struct Arguments: Sendable, Equatable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// The parser refuses more pairs than this (`bad-argument`): no verb takes
    /// nearly as many, and it bounds the duplicate check.
    public static let maximumCount = 32

    var storage: [Argument]

    public init() { storage = [] }

    /// Pairs in order. Keys must be unique; a later duplicate replaces the value.
    public init(_ pairs: [(String, String)]) {
        storage = []
        storage.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public var startIndex: Int { storage.startIndex }
    public var endIndex: Int { storage.endIndex }
    public subscript(position: Int) -> Argument { storage[position] }

    /// The value of `key`, or nil when the key is absent.
    public func value(for key: String) -> String? {
        for argument in storage where argument.key == key { return argument.value }
        return nil
    }

    public func contains(key: String) -> Bool { value(for: key) != nil }

    /// Reads, replaces, appends (at the end) or, with nil, removes a value.
    public subscript(key: String) -> String? {
        get { value(for: key) }
        set {
            let index = storage.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let i?, let v?): storage[i].value = v
            case (let i?, nil): storage.remove(at: i)
            case (nil, let v?): storage.append(Argument(key: key, value: v))
            case (nil, nil): break
            }
        }
    }

    /// The first key not in `allowed`, in wire order.
    public func firstKey(notIn allowed: [String]) -> String? {
        for argument in storage where !allowed.contains(argument.key) { return argument.key }
        return nil
    }

    /// `bad-argument` naming the first key that `verb` does not take, or nil
    /// when every key is allowed.
    public func check(allowedKeys allowed: [String], verb: String) -> ProtocolError? {
        guard let key = firstKey(notIn: allowed) else { return nil }
        let list = allowed.isEmpty ? "none" : allowed.joined(separator: ", ")
        return ProtocolError(.badArgument, "Unknown key '\(key)' for '\(verb)' (allowed: \(list)).")
    }

    /// The value of a required key, or `missing-argument` naming it.
    public func require(_ key: String) -> Result<String, ProtocolError> {
        if let value = value(for: key) { return .success(value) }
        return .failure(ProtocolError(.missingArgument, "The key '\(key)' is required."))
    }
}
