// `admin SOCKET LINE...`: sends each line on one connection, prints each
// reply (setup steps of scripts/bench: enroll, set-passcode).
import Glibc

func adminMain(_ arguments: [String]) {
    guard arguments.count >= 2 else { die("usage: admin SOCKET LINE...") }
    let fd = connectOrDie(arguments[0])
    var reader = LineReader(fd: fd)
    for line in arguments.dropFirst() {
        sendLine(fd, line)
        say(reader.readLine())
    }
    close(fd)
}
