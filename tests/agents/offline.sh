#!/bin/sh
# Run a command with no network but loopback: in a network namespace of its own
# (Linux; as root, or through a user namespace). The agent CLIs under test then cannot
# reach any host but the scripted model server on 127.0.0.1, whatever they try.
# Where namespaces are not allowed it runs the command as it is and says so; the
# suite's proxy trap (tests/agents/fakemodel.py) still catches what honours proxies.
if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then
    for flags in -n -rn; do
        if unshare $flags sh -c 'ip link set lo up' >/dev/null 2>&1; then
            echo "offline.sh: running without network (own network namespace, loopback only)" >&2
            exec unshare $flags sh -c 'ip link set lo up && exec "$@"' sh "$@"
        fi
    done
fi
echo "offline.sh: no network namespace here; running with the machine's network" >&2
exec "$@"
