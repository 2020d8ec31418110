#!/usr/bin/python3
# Touch or type (S-60) through real libpam, on a real terminal: pamtester
# (libpam_misc's misc_conv reads its standard input, here a pty that
# python3-pexpect holds) against a running localauthd. Run by scripts/test-pam:
#
#   touch_or_type.py SOCKET SERVICE USER UID PASSWORD
#
# Prints TAP-like "ok - ..." / "not ok - ..." lines. Waits are on what the
# terminal shows or the daemon answers; the timeouts are safety nets.
import socket
import sys
import time

import pexpect

sock, service, user, uid, password = sys.argv[1:6]


def admin(line):
    client = socket.socket(socket.AF_UNIX)
    client.connect(sock)
    client.sendall(("a " + line + "\n").encode())
    reply = client.makefile().readline()
    client.close()
    return reply


def feed(result):
    """A sensor reading, once uid's biometric (or combined) prompt waits."""
    for _ in range(200):
        if admin("sensor uid=%s result=%s" % (uid, result)).startswith("a OK"):
            return True
        time.sleep(0.05)
    return False


def field(name):
    for word in admin("status uid=" + uid).split():
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


failures = 0


def report(ok, what, detail=""):
    global failures
    if ok:
        print("ok - " + what)
    else:
        failures += 1
        print("not ok - %s %s" % (what, detail))


def session():
    child = pexpect.spawn("pamtester", ["-v", service, user, "authenticate"], encoding="utf-8", timeout=30)
    child.expect("Password or touch the sensor: ")
    return child


def finished(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, child.before


# 1. A match with no key pressed ends the pending password prompt (TIOCSTI).
child = session()
feed("match")
code, out = finished(child)
report(code == 0 and "successfully authenticated" in out, "a match with no key pressed -> PAM_SUCCESS", repr(out))

# 2. The password typed while the sensor waits.
child = session()
child.sendline(password)
code, out = finished(child)
report(code == 0 and "successfully authenticated" in out, "the password typed during the scan -> PAM_SUCCESS", repr(out))
report(password not in out, "the password was not echoed", repr(out))

# 3. Three misses (the biometric half ends) while half the password is typed:
#    nothing typed is lost, and nothing is echoed.
half = len(password) // 2
child = session()
child.send(password[:half])
for _ in range(3):
    feed("nomatch")
failed = field("biometric-failures")
child.sendline(password[half:])
code, out = finished(child)
report(code == 0 and "successfully authenticated" in out, "three misses while half typed, then the rest -> PAM_SUCCESS",
       repr(out))
report(failed == "3", "the three misses were counted (S-1)", "biometric-failures=%s" % failed)

# 4. A wrong password during the scan is counted once, the prompt comes
#    again, and a match then still wins.
child = session()
child.sendline("not-" + password)
child.expect("Wrong password. Password or touch the sensor: ")
report(field("passcode-failures") == "1", "a wrong password during the scan is counted once",
       "passcode-failures=%s" % field("passcode-failures"))
feed("match")
code, out = finished(child)
report(code == 0, "then a match -> PAM_SUCCESS", repr(out))

admin("reset uid=" + uid)
sys.exit(1 if failures else 0)
