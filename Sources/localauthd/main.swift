import Glibc
import LocalAuthServer

exit(Daemon.main(Array(CommandLine.arguments.dropFirst())))
