#!/usr/bin/python3
# The login secret's hostile and once-only cases (S-75), on the daemon's
# socket, with the protocol itself rather than pam_localauth: a second
# release in one evaluation, a cached success, a release after a passcode
# success, an ordinary client asking (for a root context and for none),
# a forged service name from a non-root caller, and a context of another
# connection. Prints TAP-style "ok - ..." / "not ok - ..." lines; scripts/
# test-keyring runs it as root and hands it the password's SHA-256.
#
#   hostile.py SOCKET LISTED-SERVICE UID PASSWORD-SHA256 [UNPRIVILEGED-UID]
import base64, hashlib, os, socket, sys

path, service, uid, digest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
other = int(sys.argv[5]) if len(sys.argv) > 5 else 65533


class Link:
    def __init__(self, as_uid=None):
        pid = None
        if as_uid is not None:
            # A child of another uid holds the connection (SO_PEERCRED is
            # the connecting process's); it hands us the socket and exits.
            parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            pid = os.fork()
            if pid == 0:
                os.setgroups([])
                os.setgid(as_uid)
                os.setuid(as_uid)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                socket.send_fds(child, [b"x"], [s.fileno()])
                os._exit(0)
            _, fds, _, _ = socket.recv_fds(parent, 1, 1)
            os.waitpid(pid, 0)
            self.sock = socket.socket(fileno=fds[0])
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(path)
        self.sock.settimeout(30)
        self.file = self.sock.makefile("rb")

    def send(self, line):
        self.sock.sendall(line.encode() + b"\n")

    def until(self, tag, final=True):
        """The next line of `tag` (a PROMPT too unless final)."""
        while True:
            line = self.file.readline().decode().rstrip("\n")
            if not line:
                raise SystemExit("the daemon closed the connection")
            parts = line.split(" ")
            if parts[0] != tag:
                continue
            if final and len(parts) > 1 and parts[1] == "PROMPT":
                continue
            return line

    def call(self, tag, line):
        self.send(f"{tag} {line}")
        return self.until(tag)


def fields(line):
    out = {}
    for part in line.split(" ")[2:]:
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v.strip('"')
    return out


results = []


def check(name, cond, detail=""):
    results.append(cond)
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else f": {detail}"))


admin = Link()


def biometric_success(link, tag="e"):
    """Opens an on-behalf context for the listed service and matches a finger."""
    ctx = fields(link.call("n", f"new uid={uid} service={service}"))["ctx"]
    link.send(f'{tag} evaluate ctx={ctx} policy=owner reason="keyring test"')
    link.until(tag, final=False)  # the prompt waits
    admin.call("a", f"sensor uid={uid} result=match")
    return ctx, link.until(tag)


def released(line):
    f = fields(line)
    return line.split(" ")[1] == "OK" and "secret" in f and \
        hashlib.sha256(base64.b64decode(f["secret"])).hexdigest() == digest


root = Link()
ctx, ok = biometric_success(root)
check("a biometric success of a listed service offers the secret", "login-secret=offered" in ok, ok)
first = root.call("k", f"login-secret ctx={ctx}")
check("root's first login-secret after it gets the password", released(first), first.split(" secret=")[0])
second = root.call("k", f"login-secret ctx={ctx}")
check("a second release in one evaluation gets nothing (not-authorized)",
      "ERR" in second and "not-authorized" in second and "secret=" not in second, second)
cached = root.call("e", f'evaluate ctx={ctx} policy=owner reason="again"')
check("a second evaluation of the context succeeds cached, without an offer",
      "method=cached" in cached and "login-secret" not in cached, cached)
after = root.call("k", f"login-secret ctx={ctx}")
check("a cached success gets nothing", "ERR" in after and "secret=" not in after, after)

# An ordinary client: refused whatever context it names, and recorded.
user = Link(as_uid=int(uid))
own = fields(user.call("n", "new"))["ctx"]
asked = user.call("k", f"login-secret ctx={own}")
check("an ordinary client asking for its own context gets permission-denied",
      "permission-denied" in asked and "secret=" not in asked, asked)
ctx2, ok2 = biometric_success(root)
stolen = user.call("k", f"login-secret ctx={ctx2}")
check("an ordinary client naming root's offered context gets nothing",
      "ERR" in stolen and "secret=" not in stolen, stolen)
forged = user.call("n", f"new uid={uid} service={service}")
check("a forged service name from a non-root caller is refused (S-42)", "permission-denied" in forged, forged)
# Another root connection cannot take an offer made to this one.
thief = Link()
taken = thief.call("k", f"login-secret ctx={ctx2}")
check("another connection, even root's, cannot take the offer", "ERR" in taken and "secret=" not in taken, taken)
still = root.call("k", f"login-secret ctx={ctx2}")
check("the offer is still the owner's after those attempts", released(still), still.split(" secret=")[0])

# Hostile arguments never crash the daemon or release anything.
for line in ["login-secret", "login-secret ctx=", "login-secret ctx=zz", "login-secret ctx=" + "a" * 4000,
             f"login-secret ctx={ctx2} ctx={ctx2}", f"login-secret ctx={ctx2} extra=1"]:
    reply = root.call("h", line)
    check(f"'{line[:40]}' is refused", "ERR" in reply and "secret=" not in reply, reply)
check("the daemon still answers", "OK" in admin.call("a", "ping"))
sys.exit(0 if all(results) else 1)
