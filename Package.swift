// swift-tools-version:6.0
// The module graph is the architecture (see docs/ARCHITECTURE.md):
//
//   LocalAuthHex       pure hex digits, the one parser every layer shares
//   LocalAuthCore      pure rules: decide/evolve, no Glibc, no clock, no I/O
//   LocalAuthProtocol  pure line codec of PROTOCOL.md
//   LocalAuthConfig    pure INI parser and configuration values
//   LocalAuthSystem    thin syscall layer (epoll, sockets, files, crypto, systemd)
//   LocalAuthKeys      the rights' keys: P-256, Apple's ECIES, the X9.63 KDF (libcrypto)
//   LocalAuthLog       the append-only event log (segments, snapshots, replay)
//   LocalAuthServer    the daemon: event loop, connections, verbs, backends
//   LocalAuthSimulation  the deterministic simulator over the real core and gate
//   LocalAuthSeeded    the seeded generator of the simulator and the tests (a leaf)
//   LocalAuthentication  Apple's client API over the protocol
//   localauthd / localauthctl  executables
//
// The core depends on nothing but LocalAuthHex (pure, a leaf), so it cannot
// import an I/O module by mistake.
import PackageDescription

let package = Package(
    name: "localauthd",
    products: [
        .library(name: "LocalAuthentication", targets: ["LocalAuthentication"]),
        .executable(name: "localauthd", targets: ["localauthd"]),
        .executable(name: "localauthctl", targets: ["localauthctl"]),
    ],
    targets: [
        // Pure layers.
        // The hex parser of the core (ids), the protocol (the can-evaluate
        // fast path), the log, the server and the client: its own leaf,
        // since the core and the protocol share no other module.
        .target(name: "LocalAuthHex"),
        .target(name: "LocalAuthCore", dependencies: ["LocalAuthHex"]),
        .target(name: "LocalAuthProtocol", dependencies: ["LocalAuthHex"]),
        .target(name: "LocalAuthConfig", dependencies: ["LocalAuthCore"]),

        // C libraries from Debian, and the shim for calls Glibc does not expose.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CXCrypt", pkgConfig: "libxcrypt", providers: [.apt(["libcrypt-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CLocalAuthShim"),
        // What a session agent reads of the app that asks (S-67): shared with
        // the desktop agent's Makefile (Sources/localauth-agent).
        .target(name: "CLocalAuthAgent"),
        // The rights' keys (issue 33): P-256 ECDSA and ECDH, Apple's ECIES and
        // the X9.63 KDF over libcrypto. The client's public-key operations
        // and the daemon's private-key ones share it, so it needs nothing else.
        .target(name: "LocalAuthKeys", dependencies: ["COpenSSL"]),

        // I/O layers.
        .target(name: "LocalAuthSystem", dependencies: ["CLocalAuthShim", "CSystemd", "CXCrypt", "COpenSSL"]),
        // The writer's state is only touched under its lock; the dynamic
        // exclusivity checks on it cost 128 instructions per appended record
        // (callgrind, scripts/bench-profile c=16 P=16, 2 Dec, docs/PERFORMANCE.md: EventLog.append
        // 547 with the checks, 419 without; the whole daemon 5,029 vs 4,898
        // per request, 2.7%), so release builds drop them as the server's do.
        .target(name: "LocalAuthLog", dependencies: ["LocalAuthHex", "LocalAuthCore", "LocalAuthSystem"], exclude: ["FORMAT.md"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        // The event loop's state is confined to one thread. Its dynamic
        // exclusivity checks cost 963 instructions per can-evaluate (callgrind,
        // scripts/bench-profile c=16 P=16, 2 Dec: the whole daemon 5,861 with
        // them, 4,898 without, 16%), so release builds drop them; debug
        // builds, which the unit tests and fuzz regressions run, keep them,
        // and CI runs the black-box suites against the release binaries too.
        .target(name: "LocalAuthServer", dependencies: [
            "LocalAuthHex", "LocalAuthCore", "LocalAuthProtocol", "LocalAuthConfig", "LocalAuthSystem", "LocalAuthLog",
            "LocalAuthKeys",
        ], swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .executableTarget(name: "localauthd", dependencies: ["LocalAuthServer"]),

        // Clients.
        .target(name: "LocalAuthentication", dependencies: ["LocalAuthHex", "LocalAuthProtocol", "LocalAuthCore", "LocalAuthKeys"]),
        .executableTarget(name: "localauthctl", dependencies: [
            "LocalAuthentication", "LocalAuthProtocol", "LocalAuthCore", "LocalAuthConfig", "LocalAuthLog",
            "LocalAuthSystem", "CLocalAuthAgent",
        ]),

        // Tests.
        .testTarget(name: "LocalAuthHexTests", dependencies: ["LocalAuthHex"]),
        .testTarget(name: "LocalAuthCoreTests", dependencies: ["LocalAuthCore", "LocalAuthTestSupport"]),
        .testTarget(name: "LocalAuthProtocolTests", dependencies: ["LocalAuthProtocol", "LocalAuthTestSupport"]),
        .testTarget(name: "LocalAuthConfigTests", dependencies: ["LocalAuthConfig", "LocalAuthCore", "LocalAuthTestSupport"]),
        .testTarget(name: "LocalAuthSystemTests", dependencies: ["LocalAuthSystem", "LocalAuthTestSupport"]),
        .testTarget(name: "LocalAuthKeysTests", dependencies: ["LocalAuthKeys", "LocalAuthTestSupport"]),
        .testTarget(name: "LocalAuthLogTests", dependencies: [
            "LocalAuthLog", "LocalAuthCore", "LocalAuthSystem", "LocalAuthTestSupport",
        ]),
        // Programs the tests run, not products (scripts/install and the
        // Debian package ship only localauthd and localauthctl): the writer the
        // log's crash tests kill, and the log's benchmark, run by hand in release.
        .executableTarget(name: "localauthlog-child", dependencies: ["LocalAuthLog", "LocalAuthCore"],
                          path: "Tests/LocalAuthLogChild"),
        .executableTarget(name: "localauthlog-bench", dependencies: ["LocalAuthLog", "LocalAuthSystem"],
                          path: "Tests/LocalAuthLogBench"),
        // An app with a plain LAContext, for the session agents' tests (S-66).
        .executableTarget(name: "localauth-app-probe", dependencies: ["LocalAuthentication"],
                          path: "Tests/LocalAuthAppProbe"),
        .testTarget(name: "LocalAuthenticationTests", dependencies: ["LocalAuthentication", "LocalAuthTestSupport"]),
        // Swift 5 language mode, as most iOS code is: the API-shape file
        // (a symlink to LocalAuthenticationTests') and LAContext mocks.
        .testTarget(name: "LocalAuthenticationSwift5Tests", dependencies: ["LocalAuthentication"],
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        // The seed articles' code, verbatim, run against a live daemon in
        // Swift 5 mode. Its only warnings are Apple's own ("switch must be
        // exhaustive" for opticID), which SeedVerbatimTests pins exactly.
        .testTarget(name: "LocalAuthenticationSeedTests", dependencies: ["LocalAuthentication", "LocalAuthTestSupport"],
                    swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]),
        // The one test harness (only tests use it): the daemon launcher, the
        // protocol client, the seeded generator and the temporary directory.
        .target(name: "LocalAuthTestSupport", dependencies: ["LocalAuthProtocol", "LocalAuthSystem", "LocalAuthSeeded"],
                path: "Tests/LocalAuthTestSupport"),
        .testTarget(name: "LocalAuthIntegrationTests", dependencies: [
            "LocalAuthProtocol", "LocalAuthSystem", "LocalAuthTestSupport", "LocalAuthKeys",
        ]),
        .testTarget(name: "LocalAuthSystemdTests", dependencies: [
            "LocalAuthProtocol", "LocalAuthSystem", "LocalAuthTestSupport",
        ]),
        .testTarget(name: "LocalAuthCtlTests", dependencies: [
            "LocalAuthProtocol", "LocalAuthSystem", "LocalAuthCore", "LocalAuthLog", "LocalAuthTestSupport",
        ]),
        // S-43 against the real fprintd (virtual device, private bus); skips without it.
        // It also reads hostile D-Bus messages with the server's parsers (@testable).
        // The D-Bus API (issue 32) against the real daemon on a private
        // system bus with the shipped policy; its clients are GDBus in Python.
        .testTarget(name: "LocalAuthDBusTests", dependencies: ["LocalAuthProtocol", "LocalAuthSystem", "LocalAuthTestSupport"],
                    exclude: ["bus_driver.py", "compare_introspection.py"]),
        .testTarget(name: "LocalAuthServerTests", dependencies: [
            "LocalAuthCore", "LocalAuthConfig", "LocalAuthLog", "LocalAuthSystem", "LocalAuthServer", "LocalAuthProtocol",
            "LocalAuthSimulation",
        ]),
        // ServerCore driven with no socket, file, thread or clock (issue 18 item 1).
        .testTarget(name: "LocalAuthServerCoreTests", dependencies: [
            "LocalAuthCore", "LocalAuthConfig", "LocalAuthProtocol", "LocalAuthSystem", "LocalAuthServer", "LocalAuthSeeded",
            "LocalAuthSimulation",
        ]),
        .testTarget(name: "LocalAuthFprintdTests", dependencies: [
            "LocalAuthProtocol", "LocalAuthSystem", "LocalAuthCore", "LocalAuthServer", "LocalAuthTestSupport",
        ]),
        // The fuzz targets' entry points (Tests/Fuzz): linked into libFuzzer
        // binaries by scripts/fuzz, and run over the committed inputs by
        // FuzzRegressionTests. LogFuzz reaches the segment format through
        // the log's `package` declarations, so it builds in release too.
        .target(name: "LocalAuthFuzzTargets", dependencies: [
            "LocalAuthProtocol", "LocalAuthConfig", "LocalAuthCore", "LocalAuthLog", "LocalAuthSystem",
        ], path: "Tests/Fuzz", exclude: ["corpus", "regressions"]),
        // The deterministic simulator (docs/RELIABILITY.md "Deterministic
        // simulation"): the real server core (ServerCore: dispatch, replies,
        // the reply gate, fail closed) and record framing over a simulated
        // disk, clock, sockets, workers and clients. Not a product: CI runs its seeds.
        // It reaches the server through its `package` declarations (no
        // @testable import outside Tests/), so `swift build -c release` builds it.
        // The seeded generator both share (a leaf, no dependencies).
        .target(name: "LocalAuthSeeded"),
        .target(name: "LocalAuthSimulation", dependencies: [
            "LocalAuthCore", "LocalAuthProtocol", "LocalAuthLog", "LocalAuthServer", "LocalAuthConfig", "LocalAuthSystem",
            "LocalAuthSeeded",
        ]),
        .executableTarget(name: "localauth-sim", dependencies: ["LocalAuthSimulation"]),
        .testTarget(name: "LocalAuthSimulationTests", dependencies: [
            "LocalAuthSimulation", "LocalAuthCore", "LocalAuthTestSupport", "LocalAuthServer", "LocalAuthConfig",
            "LocalAuthSystem", "LocalAuthLog",
        ]),
        .testTarget(name: "LocalAuthReliabilityTests", dependencies: [
            "LocalAuthProtocol", "LocalAuthSystem", "LocalAuthCore", "LocalAuthLog", "LocalAuthConfig",
            "LocalAuthTestSupport", "LocalAuthFuzzTargets", "LocalAuthKeys",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
