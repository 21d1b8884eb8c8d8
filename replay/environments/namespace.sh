# Runs inside `unshare --mount [--net]`: put the instance's tree at /testbed and its venv at
# /opt/replay-venv, and, without network, bring loopback up, send unroutable addresses into a
# black hole on it, make the rest of the file system read-only and give the command its own /tmp.
fail() { echo "replay-namespace-setup-failed: $1" >&2; exit 222; }
mount --bind "$REPLAY_TREE" /testbed || fail "bind /testbed"
mount --bind "$REPLAY_VENV" /opt/replay-venv || fail "bind /opt/replay-venv"
if [ -z "$REPLAY_NET" ]; then
    ip link set lo up || fail "loopback"
    for address in $REPLAY_UNROUTABLE; do
        ip route add "$address/32" dev lo || fail "route $address"
    done
    mount -o remount,bind,ro / 2>/dev/null || echo "replay: warning: could not make / read-only" >&2
    mount -t tmpfs -o size=2g,mode=1777 tmpfs /tmp || fail "tmpfs /tmp"
fi
cd /testbed || fail "cd /testbed"
command=$REPLAY_CMD
unset REPLAY_CMD REPLAY_TREE REPLAY_VENV REPLAY_NET REPLAY_UNROUTABLE
exec bash -c "$command"
