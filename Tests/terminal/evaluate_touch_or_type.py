#!/usr/bin/python3
# `localauthctl evaluate` on a real pty (python3-pexpect), touch or type
# (S-60): the terminal shows "Touch the sensor or type your passcode", a
# match answers with no key pressed, and a passcode typed across misses is
# kept whole. Run by LocalAuthCtlTests.TouchOrTypeTerminalTests:
#
#   evaluate_touch_or_type.py LOCALAUTHCTL SOCKET PASSCODE
#
# Prints "ok - ..." / "not ok - ..." lines; the timeouts are safety nets.
import socket
import sys
import time

import pexpect

ctl, sock, passcode = sys.argv[1:4]


def feed(result):
    for _ in range(200):
        client = socket.socket(socket.AF_UNIX)
        client.connect(sock)
        client.sendall(("a sensor uid=0 result=%s\n" % result).encode())
        reply = client.makefile().readline()
        client.close()
        if reply.startswith("a OK"):
            return True
        time.sleep(0.05)
    return False


def report(ok, what, detail=""):
    print(("ok - " if ok else "not ok - ") + what + ("" if ok else " " + detail))


def evaluate():
    child = pexpect.spawn(ctl, ["evaluate", "--socket", sock, "--policy", "owner", "--reason", "unlock the vault"],
                          encoding="utf-8", timeout=30)
    child.expect("Touch the sensor or type your passcode")
    return child


child = evaluate()
report(True, "localauthctl evaluate shows touch or type at once")
feed("match")
child.expect(pexpect.EOF)
child.close()
report(child.exitstatus == 0 and "Authenticated (biometric)" in child.before, "a match with no key pressed",
       repr(child.before))

child = evaluate()
half = len(passcode) // 2
child.send(passcode[:half])
feed("nomatch")
child.expect("Try again.")
child.expect("Touch the sensor or type your passcode")
child.sendline(passcode[half:])
child.expect(pexpect.EOF)
child.close()
report(child.exitstatus == 0 and "Authenticated (passcode)" in child.before,
       "a passcode typed across a miss is kept whole", repr(child.before))
report(passcode not in child.before, "the passcode was not echoed", repr(child.before))
