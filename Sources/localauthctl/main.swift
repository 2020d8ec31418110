// localauthctl: the administrator's and auditor's tool for localauthd.
// Live commands speak PROTOCOL.md over the daemon's socket; offline commands
// read the state directory's event log (AUDIT.md). See `Tool` for the table.

import Glibc

let status = Tool.main(Array(CommandLine.arguments.dropFirst()))
Console.flush()
exit(status)
