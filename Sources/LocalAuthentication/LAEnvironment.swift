// Apple's `LAEnvironment` (iOS 18 / macOS 15): the current user's
// authentication mechanisms and their state, with observers told of every
// change. Backed by the daemon's `watch` verb (PROTOCOL.md v1.1): one
// connection per process, opened on the first `state` read or observer,
// which receives a STATE line at once and after each change (enrollment,
// lockout, passcode set or cleared, reset). Observers are held weakly, as
// Apple's are, and are called on a private serial queue, never the caller's.
// When the daemon is unreachable the state has no mechanisms (biometry and
// userPassword nil); while observers exist the connection is retried every
// second, and the first state after it returns is reported as a change.

import Dispatch
import Foundation
import LocalAuthProtocol

@available(macOS 15.0, iOS 18.0, *)
extension LAEnvironment {
    /// Apple's `LAEnvironment.Observer` (Objective-C `LAEnvironmentObserver`).
    /// Its one method is `optional` in Apple's SDK; Swift on Linux has no
    /// optional requirements, so it is a requirement with an empty default,
    /// and it has one spelling only, Apple's: an app's observer either
    /// matches it exactly or is never called, on iOS and here alike
    /// (AppleNamesProbeTests type-checks a probe written from Apple's pages).
    public protocol Observer: AnyObject {
        func environment(_ environment: LAEnvironment, stateDidChangeFromOldState oldState: LAEnvironment.State)
    }
}

@available(macOS 15.0, iOS 18.0, *)
extension LAEnvironment.Observer {
    public func environment(_ environment: LAEnvironment, stateDidChangeFromOldState oldState: LAEnvironment.State) {}
}

/// Apple's Objective-C names, which Apple's Swift overlay renames: Swift
/// code that spells them gets the same "renamed" error as on iOS.
@available(*, unavailable, renamed: "LAEnvironment.Observer")
public typealias LAEnvironmentObserver = LAEnvironment.Observer
@available(*, unavailable, renamed: "LAEnvironment.State")
public typealias LAEnvironmentState = LAEnvironment.State
@available(*, unavailable, renamed: "LAEnvironment.Mechanism")
public typealias LAEnvironmentMechanism = LAEnvironment.Mechanism
@available(*, unavailable, renamed: "LAEnvironment.MechanismBiometry")
public typealias LAEnvironmentMechanismBiometry = LAEnvironment.MechanismBiometry
@available(*, unavailable, renamed: "LAEnvironment.MechanismUserPassword")
public typealias LAEnvironmentMechanismUserPassword = LAEnvironment.MechanismUserPassword
@available(*, unavailable, renamed: "LAEnvironment.MechanismCompanion")
public typealias LAEnvironmentMechanismCompanion = LAEnvironment.MechanismCompanion

@available(macOS 15.0, iOS 18.0, *)
public final class LAEnvironment: NSObject, @unchecked Sendable {
    /// The environment of the user this process runs as.
    public static let currentUser = LAEnvironment(socketPath: nil)

    /// Linux extra: the environment as seen through an explicit socket
    /// (tests, tools); `currentUser` uses `$LOCALAUTHD_SOCKET` or the default.
    public convenience init(socketPath: String) {
        self.init(socketPath: Optional(socketPath))
    }

    private init(socketPath: String?) {
        fixedSocketPath = socketPath
        super.init()
    }

    deinit {
        link?.close()
    }

    private let fixedSocketPath: String?
    private let lock = NSLock()
    private var link: DaemonLink?
    private var current: State?
    private var observers: [WeakObserver] = []
    private var retrying = false
    private let queue = DispatchQueue(label: "LocalAuthentication.LAEnvironment")

    /// The state now: the daemon's latest STATE line (waited for, at most a
    /// few seconds, on first use), or no mechanisms when it is unreachable.
    public var state: State {
        if let state = lock.withLock({ link != nil && !(link?.isLost ?? true) ? current : nil }) { return state }
        start()
        return lock.withLock { current } ?? State.unreachable
    }

    public func addObserver(_ observer: any LAEnvironment.Observer) {
        lock.withLock {
            observers.removeAll { $0.value == nil || $0.value === observer }
            observers.append(WeakObserver(value: observer))
        }
        start()
    }

    public func removeObserver(_ observer: any LAEnvironment.Observer) {
        lock.withLock { observers.removeAll { $0.value == nil || $0.value === observer } }
    }

    // MARK: The watch

    /// Connects and watches unless a live watch exists; waits briefly for the first STATE.
    private func start() {
        let needed: Bool = lock.withLock {
            if let link, !link.isLost { return false }
            link = nil
            return true
        }
        guard needed else { return }
        guard case .success(let connected) = DaemonLink.connect(path: fixedSocketPath ?? DaemonLink.defaultSocketPath) else {
            return scheduleRetry()
        }
        let installed: Bool = lock.withLock {
            guard link == nil else { return false }
            link = connected
            return true
        }
        guard installed else { return connected.close() }
        let first = DispatchSemaphore(value: 0)
        let once = OnceFlag()
        connected.send("watch", [], lasting: true) { [weak self] event in
            switch event {
            case .lost:
                if once.set() { first.signal() }
                self?.lost(connected)
            case .reply(let response):
                if response.status == .err {
                    if once.set() { first.signal() }
                    return
                }
                guard response.status == .state else { return }
                self?.received(State(response.arguments))
                if once.set() { first.signal() }
            }
        }
        _ = first.wait(timeout: .now() + 5)
    }

    private func received(_ state: State) {
        let (old, targets): (State?, [any LAEnvironment.Observer]) = lock.withLock {
            let old = current
            current = state
            return (old, observers.compactMap { $0.value })
        }
        guard let old, old != state else { return }
        // Observers are the app's objects, called only on this serial queue.
        let box = ObserverList(targets)
        queue.async { [self] in
            for observer in box.observers { observer.environment(self, stateDidChangeFromOldState: old) }
        }
    }

    private func lost(_ gone: DaemonLink) {
        lock.withLock { if link === gone { link = nil } }
        scheduleRetry()
    }

    /// While observers exist, tries to watch again in a second.
    private func scheduleRetry() {
        let retry: Bool = lock.withLock {
            guard !retrying, observers.contains(where: { $0.value != nil }) else { return false }
            retrying = true
            return true
        }
        guard retry else { return }
        queue.asyncAfter(deadline: .now() + 1) { [self] in
            lock.withLock { retrying = false }
            start()
        }
    }
}

private final class ObserverList: @unchecked Sendable {
    let observers: [any LAEnvironment.Observer]
    init(_ observers: [any LAEnvironment.Observer]) { self.observers = observers }
}

private struct WeakObserver {
    weak var value: (any LAEnvironment.Observer)?
}

/// True to the first caller of `set` only.
private final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func set() -> Bool { lock.withLock { defer { done = true }; return !done } }
}
