// The one way the suites wait: for an observable event (a reply, a `stats`
// counter, the durable seq, a line in the daemon's stderr, a file), polled
// until it holds. The bound is a safety net, never an assertion about speed;
// the pause between polls only spares the CPU the daemon needs.
import Foundation
import Glibc

/// Polls `condition` until it holds; false if it still did not after `safetyNet` seconds.
@discardableResult
public func waitUntil(safetyNet: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(safetyNet)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(10_000)
    }
}
