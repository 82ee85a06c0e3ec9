# Shared by fuzz/run.sh and fuzz/make_corpora.sh (bash; source it).

FUZZ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZ_BUILD=${FUZZ_BUILD:-$FUZZ_ROOT/build-fuzz}
FUZZ_CORPORA=$FUZZ_ROOT/fuzz/corpus

# Every target: the fuzz/*_fuzz.cpp sources (each is registered in
# fuzz/CMakeLists.txt under the same name).
fuzz_all_targets() {
    local f
    for f in "$FUZZ_ROOT"/fuzz/*_fuzz.cpp; do
        basename "$f" .cpp
    done
}

# The largest input each target is given (-max_len): whole files for the
# text parsers, message sequences for the protocol targets.
fuzz_max_len() {
    case $1 in
        key_file_fuzz | ssh_config_fuzz | sshd_config_fuzz | known_hosts_fuzz | authorized_keys_fuzz) echo 16384 ;;
        server_core_fuzz) echo 8192 ;;
        *) echo 4096 ;;
    esac
}

# Options every run uses: a hang or a slow input (over 25 s) is a finding,
# as is memory beyond 2.5 GB.
fuzz_common_options() {
    echo "-max_len=$(fuzz_max_len "$1") -timeout=25 -rss_limit_mb=2560 -print_final_stats=1"
}

fuzz_binary() {
    echo "$FUZZ_BUILD/fuzz/$1"
}
