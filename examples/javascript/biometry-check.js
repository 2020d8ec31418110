#!/usr/bin/gjs
// biometry-check in JavaScript: the seed articles' BiometryHelper through
// localauthd's D-Bus API (io.github.localauthd.LocalAuthentication1) with
// GJS, GNOME's JavaScript (Debian's gjs) and its Gio. The same commands and
// output as examples/python/biometry-check:
//
//   biometry-check.js                       can this device use biometrics, and which kind
//   biometry-check.js --authenticate REASON authenticate: the session's dialog (its agent), else here (the sensor, then the passcode)
//   biometry-check.js --save-state FILE     keep the enrolled set's token in FILE
//   biometry-check.js --changed FILE        has the enrolled set changed since then?
//
// Exit status: 0 yes / success, 1 no / failure, 2 usage or no daemon.
// The rules behind every answer are localauthd's: docs/spec/SEMANTICS.md.
const {Gio, GLib} = imports.gi;
const System = imports.system;

const SERVICE = 'io.github.localauthd.LocalAuthentication1';
const ROOT = '/io/github/localauthd/LocalAuthentication1';
const CONTEXT = `${SERVICE}.Context`;
const REQUEST = `${SERVICE}.Request`;
// LAPolicy and LABiometryType raw values, as Apple's.
const BIOMETRICS = 1, OWNER = 2;
const BIOMETRY_NAMES = {0: 'none', 1: 'touchID', 2: 'faceID', 4: 'opticID'};

// Standard output and input as streams: every line is flushed at once (a
// pipe reads the prompts as they come), and a passcode is read as a line.
const stdout = new Gio.DataOutputStream({base_stream: new Gio.UnixOutputStream({fd: 1, close_fd: false})});
const stdin = new Gio.DataInputStream({base_stream: new Gio.UnixInputStream({fd: 0, close_fd: false})});
const write = text => { stdout.put_string(text, null); stdout.flush(null); };
const say = line => write(`${line}\n`);

function call(bus, path, iface, method, args = null, reply = null) {
    return bus.call_sync(SERVICE, path, iface, method, args, reply ? new GLib.VariantType(reply) : null,
        Gio.DBusCallFlags.NONE, -1, null).deepUnpack();
}

const hex = bytes => Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');

// canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics).
function check(bus) {
    const [ok, biometry, , name, state] = call(bus, ROOT, SERVICE, 'CanEvaluatePolicy',
        new GLib.Variant('(u)', [BIOMETRICS]), '(buisay)');
    const kind = ok ? 'available'
        : {biometryNotEnrolled: 'notEnrolled', biometryLockout: 'locked', biometryNotAvailable: 'notSupported'}[name] ?? name;
    return {ok, kind, biometry: kind === 'notSupported' ? 'none' : BIOMETRY_NAMES[biometry] ?? 'unknown', state: hex(state)};
}

// A passcode from the terminal with echo off, or a line of standard input.
function readPasscode(tty) {
    if (tty) Gio.Subprocess.new(['stty', '-echo'], Gio.SubprocessFlags.STDIN_INHERIT).wait(null);
    const [line] = stdin.read_line_utf8(null);
    if (tty) {
        Gio.Subprocess.new(['stty', 'echo'], Gio.SubprocessFlags.STDIN_INHERIT).wait(null);
        say('');
    }
    return line ?? '';
}

function isatty() {
    const test = Gio.Subprocess.new(['test', '-t', '0'], Gio.SubprocessFlags.STDIN_INHERIT);
    test.wait(null);
    return test.get_successful();
}

// evaluatePolicy(.deviceOwnerAuthentication, localizedReason:).
function authenticate(bus, reason) {
    const [context] = call(bus, ROOT, SERVICE, 'CreateContext', null, '(o)');
    // The system's prompt, as LAContext asks for it: the session's agent, where there is one (S-66).
    for (const [name, value] of [['LocalizedFallbackTitle', 'Use Password'], ['Prompts', 'agent']]) {
        call(bus, context, 'org.freedesktop.DBus.Properties', 'Set',
            new GLib.Variant('(ssv)', [CONTEXT, name, new GLib.Variant('s', value)]));
    }
    // Signals are believed from the daemon's unique name only: anyone may send one to us.
    const [owner] = bus.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
        'GetNameOwner', new GLib.Variant('(s)', [SERVICE]), new GLib.VariantType('(s)'),
        Gio.DBusCallFlags.NONE, -1, null).deepUnpack();
    const loop = new GLib.MainLoop(null, false);
    let request = null, result = null;
    const early = [];

    const handle = (path, member, params) => {
        if (member === 'Prompt') {
            const [kind, details] = params.recursiveUnpack();
            if (details.message) say(details.message);
            if (kind === 'passcode') {
                const interactive = isatty();
                write(`Password for ${details.reason ?? ''}: ${interactive ? '' : '\n'}`);
                const answer = readPasscode(interactive);
                const [method, args] = answer
                    ? ['Passcode', new GLib.Variant('(ay)', [new TextEncoder().encode(answer)])] : ['Cancel', null];
                bus.call(SERVICE, path, REQUEST, method, args, null, Gio.DBusCallFlags.NONE, -1, null, null);
            } else if (kind === 'biometric' || kind === 'biometric-or-passcode') {
                say(`Touch the sensor (attempt ${details.attempt ?? 1}): ${details.reason ?? ''}`);
            } else if (kind === 'agent') {
                say("Your session's dialog asks.");
            }
        } else if (member === 'Completed') {
            result = params.recursiveUnpack();
            loop.quit();
        }
    };
    // Subscribed before the call, so that no signal of the request is missed.
    const subscription = bus.signal_subscribe(owner, REQUEST, null, null, null, Gio.DBusSignalFlags.NONE,
        (connection, sender, path, iface, member, params) => {
            if (sender !== owner) return;
            if (request === null) early.push([path, member, params]);
            else if (path === request) handle(path, member, params);
        });
    try {
        [request] = call(bus, context, CONTEXT, 'EvaluatePolicy',
            new GLib.Variant('(usa{sv})', [OWNER, reason, {}]), '(o)');
        for (const [path, member, params] of early) if (path === request) handle(path, member, params);
        if (result === null) loop.run();
    } finally {
        bus.signal_unsubscribe(subscription);
        call(bus, context, CONTEXT, 'Invalidate');
    }
    const [success, method, code, name, details] = result;
    say(success ? `authenticated by ${method}` : `failed: ${name} (${code}): ${details.message ?? ''}`);
    return success ? 0 : 1;
}

function main(argv) {
    const command = argv.length === 2 ? argv[0] : null;
    if (argv.length !== 0 && !['--authenticate', '--save-state', '--changed'].includes(command)) {
        printerr('usage: biometry-check.js [--authenticate REASON | --save-state FILE | --changed FILE]');
        return 2;
    }
    const bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, null); // $DBUS_SYSTEM_BUS_ADDRESS, else the system bus
    if (argv.length === 0) {
        const result = check(bus);
        say(`biometry: ${result.biometry}, ${result.kind}`);
        return result.ok ? 0 : 1;
    }
    if (command === '--authenticate')
        return authenticate(bus, argv[1]);
    if (command === '--save-state') {
        GLib.file_set_contents(argv[1], `${check(bus).state}\n`);
        return 0;
    }
    const [, saved] = GLib.file_get_contents(argv[1]); // --changed
    const changed = new TextDecoder().decode(saved).trim() !== check(bus).state;
    say(`the enrolled set ${changed ? 'changed' : 'is unchanged'}`);
    return changed ? 0 : 1;
}

let status;
try {
    status = main(ARGV);
} catch (error) {
    printerr(`biometry-check: ${error.message} (is localauthd running? see docs/OPERATIONS.md)`);
    status = 2;
}
System.exit(status);
