// swift-tools-version:6.0
// The benchmark client for scripts/bench (docs/BENCHMARKS.md). A separate
// package on purpose: it is not part of the test suite and it talks the line
// protocol itself over raw Unix sockets, so it needs nothing from the root
// package and measures only what a real client would see.
import PackageDescription

let package = Package(
    name: "LocalAuthBenchmarks",
    targets: [
        .executableTarget(
            name: "localauth-bench",
            path: "Sources/localauth-bench"
        )
    ]
)
