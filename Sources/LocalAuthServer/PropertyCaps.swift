// S-48 and the memory a context may hold: caps on the strings a client
// stores. Each value (a property, evaluate's `reason=`) is at most
// `[Daemon] MaxPropertyBytes=`; a context's string properties together at
// most `MaxPropertyBytesPerContext=`; and an unprivileged uid's, over all its
// contexts and connections, at most `MaxPropertyBytesPerUser=`. A request
// over a cap is refused with `limit-exceeded` naming the cap and the key,
// and changes and records nothing. The caps bound the log (each `set` is an
// event carrying its value), snapshots (they hold every live context) and
// memory (issue 15 item 11).
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// Bytes of a context's string properties.
    static func propertyBytes(_ context: ContextState) -> Int {
        (context.fallbackTitle?.utf8.count ?? 0) + (context.cancelTitle?.utf8.count ?? 0)
            + (context.localizedReason?.utf8.count ?? 0)
    }

    /// The refusal of a `set` over a cap, else the bytes the context's
    /// string properties will take once `properties` are set.
    func checkPropertyCaps(_ properties: [ContextProperty], ctx: ContextID, _ connection: Connection.ID)
        -> Result<Int, ProtocolError> {
        let limits = configuration.daemon
        var fallback: Int?, cancel: Int?, reason: Int?
        if let context = authenticator.state.contexts[ctx] {
            fallback = context.fallbackTitle?.utf8.count
            cancel = context.cancelTitle?.utf8.count
            reason = context.localizedReason?.utf8.count
        }
        for property in properties {
            let size: Int
            switch property {
            case .fallbackTitle(let value): size = value.utf8.count; fallback = size
            case .cancelTitle(let value): size = value.utf8.count; cancel = size
            case .localizedReason(let value): size = value.utf8.count; reason = size
            case .reuseDuration, .interactionNotAllowed, .prompt: continue
            }
            if size > limits.maxPropertyBytes {
                return .failure(sizeRefusal("\(property.name)= is \(size) bytes; MaxPropertyBytes=\(limits.maxPropertyBytes) is the limit for one value."))
            }
        }
        let total = (fallback ?? 0) + (cancel ?? 0) + (reason ?? 0)
        // The key named in a refusal: the last string property of the request.
        let key = properties.last { ["fallback-title", "cancel-title", "localized-reason"].contains($0.name) }?.name ?? "set"
        if total > limits.maxPropertyBytesPerContext {
            return .failure(sizeRefusal("\(key)= would make this context's properties \(total) bytes; "
                + "MaxPropertyBytesPerContext=\(limits.maxPropertyBytesPerContext) is the limit."))
        }
        if !isExemptFromLimits(connection), let allowance = connections[connection]?.allowance {
            let held = allowance.propertyBytes - (connections[connection]?.propertyBytes[ctx] ?? 0) + total
            if held > limits.maxPropertyBytesPerUser {
                return .failure(sizeRefusal("\(key)= would make the properties of uid \(allowance.uid)'s contexts \(held) bytes; "
                    + "MaxPropertyBytesPerUser=\(limits.maxPropertyBytesPerUser) is the limit (invalidate or close some contexts)."))
            }
        }
        return .success(total)
    }

    /// evaluate's `reason=` (and any other single stored string).
    func checkValueCap(_ value: String, key: String) -> ProtocolError? {
        let size = value.utf8.count
        guard size > configuration.daemon.maxPropertyBytes else { return nil }
        return sizeRefusal("\(key)= is \(size) bytes; MaxPropertyBytes=\(configuration.daemon.maxPropertyBytes) is the limit for one value.")
    }

    private func sizeRefusal(_ message: String) -> ProtocolError {
        limits.refusedForSize += 1
        return ProtocolError(.limitExceeded, message)
    }

    /// After a `set` was recorded: the context now holds `bytes`.
    func notePropertyBytes(_ bytes: Int, ctx: ContextID, _ connection: Connection.ID) {
        connections.withValue(connection) { connection in
            let old = connection.propertyBytes[ctx] ?? 0
            connection.propertyBytes[ctx] = bytes == 0 ? nil : bytes
            connection.allowance?.propertyBytes += bytes - old
        }
    }

    /// A context left this connection (released or ended).
    func forgetPropertyBytes(of ctx: ContextID, _ connection: Connection.ID) {
        connections.withValue(connection) { connection in
            guard let old = connection.propertyBytes.removeValue(forKey: ctx) else { return }
            connection.allowance?.propertyBytes -= old
        }
    }

    /// Every context of the connection ended.
    func forgetAllPropertyBytes(_ connection: Connection.ID) {
        connections.withValue(connection) { connection in
            guard !connection.propertyBytes.isEmpty else { return }
            connection.allowance?.propertyBytes -= connection.propertyBytes.values.reduce(0, +)
            connection.propertyBytes = [:]
        }
    }
}
