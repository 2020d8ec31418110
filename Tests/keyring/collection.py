#!/usr/bin/python3
# The login keyring's state on the user's session bus (scripts/test-keyring):
# `show` prints "locked" or "unlocked"; `lock` locks it first.
import sys
import secretstorage

bus = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(bus)
if sys.argv[1:] == ["lock"]:
    collection.lock()
print("locked" if collection.is_locked() else "unlocked", collection.get_label())
