// Daemon and context lifecycle rules: S-12..S-16, S-32, S-33 (one end per
// evaluation whatever ends it), and S-15 (restart invalidates leftovers).

extension Decision {
    mutating func start(version: String, bootID: String, pid: ProcessID, rules: Rules) {
        emit(.daemonStarted(version: version, bootID: bootID, pid: pid))
        // Always recorded, so a replay never depends on this build's defaults.
        emit(.rulesApplied(rules))
        // S-15: whatever the previous run left open ends now.
        endAllContexts(reason: .restart, failure: Failure(.systemCancel, message: "The daemon restarted.", reason: "restart"))
    }

    mutating func stop() {
        // S-32: running evaluations end with systemCancel before connections close.
        endAllContexts(reason: .disconnect, failure: Failure(.systemCancel, message: "The daemon is shutting down.", reason: "shutdown"))
        emit(.daemonStopped)
    }

    private mutating func endAllContexts(reason: InvalidationReason, failure: Failure) {
        for ctx in state.contexts.keys.sorted() {
            guard let context = state.contexts[ctx] else { continue }
            if let evaluation = context.evaluation {
                fail(context, ctx, evaluation.id, failure)
            }
            if context.isOpen {
                emit(.contextInvalidated(uid: context.uid, ctx: ctx, reason: reason))
            } else {
                emit(.contextReleased(uid: context.uid, ctx: ctx))
            }
        }
    }

    /// S-13 (app: idempotent, running evaluation gets appCancel) and S-14
    /// (disconnect: the context is gone for good).
    mutating func invalidate(_ ctx: ContextID, reason: InvalidationReason) throws {
        let context = try self.context(ctx)
        if let evaluation = context.evaluation {
            let failure = reason == .app
                ? Failure(.appCancel)
                : Failure(.systemCancel, message: "The client disconnected.", reason: reason.rawValue)
            fail(context, ctx, evaluation.id, failure)
        }
        if context.isOpen {
            emit(.contextInvalidated(uid: context.uid, ctx: ctx, reason: reason))
        } else if reason != .app {
            emit(.contextReleased(uid: context.uid, ctx: ctx))
        }
    }
}
