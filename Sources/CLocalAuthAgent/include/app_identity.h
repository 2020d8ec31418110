// What a session agent may say about the app that asks (SEMANTICS.md S-67):
// the daemon names the app's process by uid, pid and the inode of the pidfd
// that pins it (pidfs); the agent, which runs as that same uid, reads what
// the kernel holds about exactly that process: its executable, its mount
// namespace, and a Flatpak sandbox's /.flatpak-info, parsed as hostile
// input. Shared by the terminal agent (localauthctl agent, through
// SwiftPM) and the desktop agent (localauth-agent, its Makefile); no locale,
// no library beyond libc, one 64 KiB buffer while a .flatpak-info is read.
// A read may block in a file system the app's sandbox mounted (FUSE): the
// agents call it off their main loop, with a deadline.
#ifndef LOCALAUTH_APP_IDENTITY_H
#define LOCALAUTH_APP_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#define LA_APP_EXE_MAX 4096
#define LA_FLATPAK_ID_MAX 256
#define LA_FLATPAK_INFO_MAX 65536

struct la_app_identity {
    /// 1 when the facts below are about the process the daemon pinned.
    int known;
    /// 1 when the daemon gave no pidfs inode (an old kernel): the pid was
    /// read as it is now, and another process may have taken it.
    int unpinned;
    /// readlink of /proc/PID/exe, as the kernel names it ("" if unreadable).
    char exe[LA_APP_EXE_MAX];
    /// 1 when that path, in the agent's own file system, is the very file
    /// the process runs (same device and inode).
    int exe_verified;
    /// 1 when the process is in another mount namespace (a sandbox, a container).
    int other_mount_namespace;
    /// The Flatpak application id its sandbox states ("" when none or invalid).
    char flatpak_id[LA_FLATPAK_ID_MAX];
    /// Why `known` is 0, for the dialog ("" when known).
    char problem[128];
};

/// Reads the identity of process `pid`, which must be the process whose
/// pidfd inode is `process` (0: not given) and whose user is `uid`.
/// Returns 0; `out->known` says whether anything was learnt.
int la_app_identity_read(int32_t pid, uint64_t process, uint32_t uid, struct la_app_identity *out);

/// The `name=` of the `[Application]` group of a .flatpak-info's bytes, into
/// `id` (size >= LA_FLATPAK_ID_MAX): 0 when found and valid, -1 otherwise
/// (no such group or key, the key twice, a NUL, a line over 4096 bytes, an
/// id outside the grammar). Hostile input: any bytes, any length.
int la_flatpak_info_app_id(const char *bytes, size_t length, char *id, size_t id_size);

/// Whether `id` is a Flatpak application id: 3..255 bytes, at least three
/// dot-separated elements of [A-Za-z0-9_-], none empty or starting with a
/// digit, `-` only in the last.
int la_flatpak_id_valid(const char *id, size_t length);

#endif
