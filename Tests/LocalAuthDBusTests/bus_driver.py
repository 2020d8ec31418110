#!/usr/bin/python3
"""One D-Bus client of the tests, driven line by line (GDBus through
python3-gi, an implementation of D-Bus that is not the daemon's own).

stdin, one JSON object per line:
  {"tag": T, "call": [path, interface, member, signature, [args...]]}
      calls io.github.localauthd.LocalAuthentication1 without waiting (so a
      test may have many calls in flight); an argument {"b": "text"} is the
      bytes of text (for "ay"), {"hex": "..."} bytes from hex.
  {"tag": T, "name": true}     prints this connection's unique name
  {"tag": T, "ping": true}     a round trip to the daemon (org.freedesktop.DBus.Peer.Ping)
  {"tag": T, "bus": true}      a round trip to the bus daemon (GetId)
stdout, one line per event, "TAG KIND JSON":
  T reply [values...]          T error {"name": ..., "message": ...}
  signal signal {"path": ..., "interface": ..., "member": ..., "args": [...]}
      every signal this connection receives, from any sender.
"""
import json
import os
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

SERVICE = "io.github.localauthd.LocalAuthentication1"
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM)


def out(tag, kind, value):
    sys.stdout.write("%s %s %s\n" % (tag, kind, json.dumps(value, default=plain)))
    sys.stdout.flush()


def plain(value):
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    raise TypeError(type(value))


def convert(value):
    """JSON to what GLib.Variant takes: {"v": [sig, value]} is a variant,
    {"b": text} and {"hex": digits} are bytes."""
    if isinstance(value, dict) and set(value) == {"v"}:
        return GLib.Variant(value["v"][0], convert(value["v"][1]))
    if isinstance(value, dict) and set(value) == {"b"}:
        return value["b"].encode()
    if isinstance(value, dict) and set(value) == {"hex"}:
        return bytes.fromhex(value["hex"])
    if isinstance(value, dict):
        return {k: convert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [convert(v) for v in value]
    return value


def variant(signature, args):
    return GLib.Variant("(%s)" % signature, tuple(convert(a) for a in args))


def on_signal(connection, sender, path, interface, member, params):
    out("signal", "signal", {"path": path, "interface": interface, "member": member, "args": params.unpack()})


bus.signal_subscribe(None, None, None, None, None, Gio.DBusSignalFlags.NONE, on_signal)


def finish(tag):
    def done(connection, result):
        try:
            value = connection.call_finish(result)
            out(tag, "reply", list(value.unpack()) if value is not None else [])
        except GLib.Error as error:
            name = Gio.DBusError.get_remote_error(error) or str(error.domain)
            message = error.message.split(": ", 1)[-1] if ": " in error.message else error.message
            out(tag, "error", {"name": name, "message": message})
    return done


def command(line):
    request = json.loads(line)
    tag = request["tag"]
    if "call" in request:
        path, interface, member, signature, args = request["call"]
        bus.call(SERVICE, path, interface, member, variant(signature, args) if signature else None,
                 None, Gio.DBusCallFlags.NONE, 60000, None, finish(tag))
    elif "name" in request:
        out(tag, "reply", [bus.get_unique_name()])
    elif "bus" in request:
        bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", None,
                 None, Gio.DBusCallFlags.NONE, 60000, None, finish(tag))
    elif "ping" in request:
        bus.call(SERVICE, "/io/github/localauthd/LocalAuthentication1", "org.freedesktop.DBus.Peer", "Ping", None,
                 None, Gio.DBusCallFlags.NONE, 60000, None, finish(tag))


pending = b""


def readable(channel, condition):
    # Raw reads: a buffered readline would keep lines GLib never reports.
    global pending
    data = os.read(sys.stdin.fileno(), 65536)
    if not data:
        loop.quit()
        return False
    pending += data
    while b"\n" in pending:
        line, pending = pending.split(b"\n", 1)
        try:
            command(line.decode())
        except Exception as error:  # a test's mistake: said, and the driver goes on
            out(json.loads(line).get("tag", "?"), "error", {"name": "driver", "message": repr(error)})
    return True


loop = GLib.MainLoop()
GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()), GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, readable)
out("ready", "reply", [bus.get_unique_name(), os.getpid()])
loop.run()
