// localauth-sim --seed N --steps K [--seeds COUNT] [--trace]: runs the
// deterministic simulator (LocalAuthSimulation) for seeds N, N+1, ...,
// prints each run's figures, and on the first violation its seed, its step
// and the steps before it; exits 1 then. The same seed replays the same run.
import Glibc
import LocalAuthSimulation

var seed: UInt64 = 1
var steps = 2000
var seeds = 1
var showTrace = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--seed": seed = arguments.popFirst().flatMap { UInt64($0) } ?? seed
    case "--steps": steps = arguments.popFirst().flatMap { Int($0) } ?? steps
    case "--seeds": seeds = arguments.popFirst().flatMap { Int($0) } ?? seeds
    case "--trace": showTrace = true
    default:
        print("usage: localauth-sim --seed N --steps K [--seeds COUNT] [--trace]")
        exit(2)
    }
}

var total = Oracle.Figures()
for offset in 0..<UInt64(max(1, seeds)) {
    let simulation = Simulation(seed: seed + offset)
    let passed = simulation.run(steps: steps)
    total.add(simulation.oracle.figures)
    if !passed {
        print("localauth-sim: seed \(seed + offset) failed at \(simulation.oracle.violations[0])")
        if showTrace { for line in simulation.trace.suffix(60) { print("  \(line)") } }
        print("reproduce: localauth-sim --seed \(seed + offset) --steps \(steps) --trace")
        exit(1)
    }
}
print("localauth-sim: \(seeds) seed(s) from \(seed), \(steps) steps each: no violation")
print(total.summary)
