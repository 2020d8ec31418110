// localauth-sim --seed N --steps K [--seeds COUNT] [--trace] [--dump]: runs
// the deterministic simulator (LocalAuthSimulation) for seeds N, N+1, ...,
// prints the figures of all of them, and on the first violation its seed,
// its step and (--trace) the steps before it; exits 1 then. --dump prints
// every step of every run. The same seed replays the same run, byte for
// byte, in any process: see below for why it re-executes itself first.
import Glibc
import LocalAuthSimulation

// Swift seeds its hashing per process, and the server core walks some of
// its dictionaries (its connections) in hash order: two processes would run
// one seed differently. Deterministic hashing makes that order a function
// of the run alone; it is read once, at the first hash, so the variable
// must be there when the process starts.
if getenv("SWIFT_DETERMINISTIC_HASHING") == nil {
    setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
    execv("/proc/self/exe", CommandLine.unsafeArgv)
    print("localauth-sim: cannot re-execute itself (\(String(cString: strerror(errno)))); hash order is this process's")
}

var seed: UInt64 = 1
var steps = 2000
var seeds = 1
var showTrace = false
var dump = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--seed": seed = arguments.popFirst().flatMap { UInt64($0) } ?? seed
    case "--steps": steps = arguments.popFirst().flatMap { Int($0) } ?? steps
    case "--seeds": seeds = arguments.popFirst().flatMap { Int($0) } ?? seeds
    case "--trace": showTrace = true
    case "--dump": dump = true
    default:
        print("usage: localauth-sim --seed N --steps K [--seeds COUNT] [--trace] [--dump]")
        exit(2)
    }
}

var total = Oracle.Figures()
for offset in 0..<UInt64(max(1, seeds)) {
    let simulation = Simulation(seed: seed + offset)
    if dump { simulation.traceLimit = Int.max }
    let passed = simulation.run(steps: steps)
    total.add(simulation.oracle.figures)
    if dump { for line in simulation.trace { print(line) } }
    if !passed {
        print("localauth-sim: seed \(seed + offset) failed at \(simulation.oracle.violations[0])")
        if showTrace { for line in simulation.trace.suffix(60) { print("  \(line)") } }
        print("reproduce: localauth-sim --seed \(seed + offset) --steps \(steps) --trace")
        exit(1)
    }
}
print("localauth-sim: \(seeds) seed(s) from \(seed), \(steps) steps each: no violation")
print(total.summary)
print(total.record)
