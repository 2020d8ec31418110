#!/usr/bin/python3
# The terminal agent (localauthctl agent) on a real pty, driven as a user
# would, for TerminalAgentTests (S-65..S-69). Started held: a shell that
# execs the agent on a newline, so that its pid is put in the logind mock's
# session first (the agent registers for the session it runs in).
#
#   terminal_agent.py LOCALAUTHCTL SOCKET BUS SESSION PASSWORD STATUS
#
# Appends one line per step to STATUS ("registered", "prompt ...",
# "authenticated", "echo-free" or "echoed", "exited"), or "failed: ..." and
# exits 1; waits for the file STATUS.scanned before it quits the agent (the
# test reads the agent's memory meanwhile). Timeouts are safety nets.
import io
import os
import re
import subprocess
import sys
import time

import pexpect

localauthctl, sock, bus, session, password, status_path = sys.argv[1:7]


def status(text):
    with open(status_path, "a") as f:
        f.write(text + "\n")


def fail(text):
    status("failed: " + text)
    sys.exit(1)


seen = io.StringIO()
child = pexpect.spawn("/bin/sh", ["-c", 'read go; exec "$0" agent --socket "$1"', localauthctl, sock],
                      encoding="utf-8", timeout=30)
child.logfile_read = seen
mapped = subprocess.run(["busctl", "--address=" + bus, "call", "org.freedesktop.login1", "/org/freedesktop/login1",
                         "org.freedesktop.login1.Manager", "MapPID", "us", str(child.pid), session],
                        capture_output=True, text=True)
if mapped.returncode != 0:
    fail("MapPID: " + mapped.stderr.strip())
child.sendline("")
try:
    child.expect("authentication agent of session " + re.escape(session))
    status("registered")
    child.expect("Authentication is requested by:")
    child.expect(r"Program (\S+)")
    program = child.match.group(1)
    child.expect(r'It says: "([^"\r\n]*)"')
    says = child.match.group(1)
    child.expect("Password or touch the sensor")
    child.expect(": ")
    status("prompt program=%s says=%s" % (program, says))
    child.sendline(password)
    child.expect("Authenticated.")
    status("authenticated")
except pexpect.ExceptionPexpect as error:
    fail("%s; the terminal showed: %r" % (type(error).__name__, seen.getvalue()[-600:]))
status("echoed" if password in seen.getvalue() else "echo-free")
for _ in range(600):
    if os.path.exists(status_path + ".scanned"):
        break
    time.sleep(0.05)
child.sendintr()
child.expect(pexpect.EOF)
child.close()
status("exited %s" % child.exitstatus)
