# Sourced before lib.sh by scripts that must run in a mount namespace of
# their own (to put the test's files over system paths without touching
# the machine's): lh_enter_mount_namespace WHY re-runs the script once in
# `unshare --mount --propagation private`; WHY says what needs it in the
# skip line when the script cannot (not root, no unshare: exit 77).
lh_enter_mount_namespace() {
    local why=$1
    shift
    [ "${LH_IN_MOUNT_NAMESPACE:-}" = 1 ] && return 0
    [ "$(id -u)" = 0 ] || { echo "SKIP: $why need root (a mount namespace)"; exit 77; }
    command -v unshare >/dev/null || { echo "SKIP: unshare not found (util-linux)"; exit 77; }
    LH_IN_MOUNT_NAMESPACE=1 exec unshare --mount --propagation private -- "$0" "$@"
}
