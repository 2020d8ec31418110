// Real threads at once, for the log's concurrency tests and the programs
// next to them (localauthlog-bench and localauthlog-child link this same
// file through a symlink: one copy).
import Dispatch
import Foundation

/// Runs `body(i)` on `count` real threads at once and waits for all
/// (DispatchQueue.concurrentPerform runs only as many at once as there are CPUs).
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            body(index)
            done.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    done.wait()
}
