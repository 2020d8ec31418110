"""A tiny client of localauthd's D-Bus API (io.github.localauthd.LocalAuthentication1),
on Gio (python3-gi), answering what the seed articles' BiometryHelper answers on
iOS: can this device use biometrics, and which kind; authenticate with a reason;
has the enrolled set changed.

Run it with Debian's /usr/bin/python3 (python3-gi is not installed into other
Pythons). The rules behind every answer are localauthd's: docs/spec/SEMANTICS.md.
"""
import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

SERVICE = "io.github.localauthd.LocalAuthentication1"
ROOT = "/io/github/localauthd/LocalAuthentication1"
CONTEXT = SERVICE + ".Context"
REQUEST = SERVICE + ".Request"

# LAPolicy and LABiometryType raw values, as Apple's.
BIOMETRICS, OWNER = 1, 2
BIOMETRY_NAMES = {0: "none", 1: "touchID", 2: "faceID", 4: "opticID"}


class CheckResult:
    """BiometryHelper.CheckResult: available(type), notEnrolled(type),
    locked(type), notSupported, or error (the LAError's name)."""

    def __init__(self, kind, biometry="none", error=None):
        self.kind, self.biometry, self.error = kind, biometry, error

    def __repr__(self):
        return "%s(%s)" % (self.kind, self.error or self.biometry)


class LAError(Exception):
    """An evaluation's failure: Apple's code (-2 userCancel, ...) and name."""

    def __init__(self, code, name, message=""):
        super().__init__("%s (%d): %s" % (name, code, message))
        self.code, self.name = code, name


class BiometryHelper:
    def __init__(self, bus=None):
        self.bus = bus or Gio.bus_get_sync(Gio.BusType.SYSTEM)

    def _call(self, path, interface, method, args=None, reply=None):
        return self.bus.call_sync(SERVICE, path, interface, method, args,
                                  GLib.VariantType(reply) if reply else None,
                                  Gio.DBusCallFlags.NONE, -1).unpack()

    def check(self):
        """Can this device use biometrics, and which kind (canEvaluatePolicy)."""
        ok, biometry, _, name, _ = self._call(ROOT, SERVICE, "CanEvaluatePolicy",
                                              GLib.Variant("(u)", (BIOMETRICS,)), "(buisay)")
        kind = BIOMETRY_NAMES.get(biometry, "unknown")
        if ok:
            return CheckResult("available", kind)
        if name == "biometryNotEnrolled":
            return CheckResult("notEnrolled", kind)
        if name == "biometryLockout":
            return CheckResult("locked", kind)
        if name == "biometryNotAvailable":
            return CheckResult("notSupported")
        return CheckResult("error", kind, name)

    def domain_state(self):
        """evaluatedPolicyDomainState: the enrolled set's token (bytes)."""
        return bytes(self._call(ROOT, SERVICE, "CanEvaluatePolicy",
                                GLib.Variant("(u)", (BIOMETRICS,)), "(buisay)")[4])

    def enrollment_changed(self, saved):
        """Has the enrolled set changed since `saved` (a domain_state())?"""
        return self.domain_state() != bytes(saved)

    def authenticate(self, reason, on_prompt=None, fallback_title="Use Password", cancel_title="Cancel"):
        """evaluatePolicy(.deviceOwnerAuthentication, localizedReason:): the
        sensor, then the passcode. As LAContext does, it asks for the system's
        prompt: where the session has an agent, its dialog asks (one Prompt of
        kind "agent", S-66) and this process never sees the password; else
        `on_prompt(kind, details)` is called for each prompt, and for a
        passcode prompt returns the passcode (bytes) or None to cancel.
        Returns the method ("biometric", "passcode", ...); raises LAError on
        failure."""
        context = self._call(ROOT, SERVICE, "CreateContext", None, "(o)")[0]
        for name, value in (("LocalizedFallbackTitle", fallback_title), ("LocalizedCancelTitle", cancel_title),
                            ("Prompts", "agent")):
            self._call(context, "org.freedesktop.DBus.Properties", "Set",
                       GLib.Variant("(ssv)", (CONTEXT, name, GLib.Variant("s", value))))
        # Signals come from the daemon's unique name only: anyone may send a
        # signal to us, so one from another sender is not believed.
        owner = self.bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "GetNameOwner", GLib.Variant("(s)", (SERVICE,)), GLib.VariantType("(s)"),
                                   Gio.DBusCallFlags.NONE, -1).unpack()[0]
        loop, early, outcome, request = GLib.MainLoop(), [], {}, [None]

        def handle(path, member, params):
            if member == "Prompt":
                kind, details = params.unpack()
                answer = on_prompt(kind, details) if on_prompt else None
                if kind == "passcode":
                    method, args = ("Passcode", GLib.Variant("(ay)", (answer,))) if answer is not None else ("Cancel", None)
                    self.bus.call(SERVICE, path, REQUEST, method, args, None, Gio.DBusCallFlags.NONE, -1, None, None)
            elif member == "Completed":
                outcome["result"] = params.unpack()
                loop.quit()

        def signal(connection, sender, path, interface, member, params):
            if sender != owner:
                return
            if request[0] is None:
                early.append((path, member, params))
            elif path == request[0]:
                handle(path, member, params)

        # Subscribed before the call, so that no signal of the request is missed.
        subscription = self.bus.signal_subscribe(owner, REQUEST, None, None, None, Gio.DBusSignalFlags.NONE, signal)
        try:
            request[0] = self._call(context, CONTEXT, "EvaluatePolicy",
                                    GLib.Variant("(usa{sv})", (OWNER, reason, {})), "(o)")[0]
            for path, member, params in early:
                if path == request[0]:
                    handle(path, member, params)
            if "result" not in outcome:
                loop.run()
        finally:
            self.bus.signal_unsubscribe(subscription)
            self._call(context, CONTEXT, "Invalidate")
        success, method, code, name, details = outcome["result"]
        if success:
            return method
        raise LAError(code, name, details.get("message", ""))
