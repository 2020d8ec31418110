// localauth-bench: the client side of scripts/bench. See docs/BENCHMARKS.md.
import Glibc

signal(SIGPIPE, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else {
    die("usage: localauth-bench rate|generate|events|contexts|hold|startup ...")
}
let rest = Array(arguments.dropFirst())
switch mode {
case "rate": rateMain(rest)
case "generate": generateMain(rest)
case "events": eventsMain(rest)
case "contexts": contextsMain(rest)
case "hold": holdMain(rest)
case "startup": startupMain(rest)
case "admin": adminMain(rest)
default: die("unknown mode \(mode)")
}
