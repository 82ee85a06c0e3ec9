#!/usr/bin/env bash
# Regenerates the committed seed corpora, fuzz/corpus/TARGET/:
#
#   fuzz/make_corpora.sh [--time S] [--build DIR] [TARGET...]
#
# For each target (default: all), seeds are made from real data:
#   - the protocol targets write their own (LONGHAUL_FUZZ_WRITE_SEEDS: real
#     key exchanges, sealed sessions and message sequences captured from
#     Longhaul's cores with deterministic randomness, see fuzz_seeds.hpp);
#   - the file parsers get files: tests/data key fixtures and PEM / PKCS#8
#     keys made here by ssh-keygen, .pub / known_hosts / authorized_keys
#     lines, SSHSIG files, KRLs, moduli, ssh_config and sshd_config files
#     (key_file_fuzz and public_key_fuzz also write generated keys and
#     signatures of their own);
# then the target runs S seconds (default 120) from those seeds, and the
# seeds and what it found are minimized together (-merge=1) into a fresh
# fuzz/corpus/TARGET. The files are named by their SHA-1 (libFuzzer's
# naming), so a rerun changes only what changed.
# Needs the fuzz build (see fuzz/run.sh) and OpenSSH's ssh-keygen.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

seconds=120
targets=()
while [ $# -gt 0 ]; do
    case $1 in
        --time) seconds=$2; shift 2 ;;
        --build) FUZZ_BUILD=$(cd "$2" && pwd); shift 2 ;;
        -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
        -*) echo "fuzz/make_corpora.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("${1%.cpp}"); shift ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(fuzz_all_targets)
command -v ssh-keygen >/dev/null || { echo "fuzz/make_corpora.sh: ssh-keygen (openssh-client) is needed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/longhaul-corpora.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
data=$FUZZ_ROOT/tests/data

# seed DIR PREFIX-BYTES... < content: writes one seed file, the prefix bytes
# (decimal) first.
seed() {
    local dir=$1
    shift
    # (mktemp: seed often runs in a pipeline's subshell, where a counter
    # would not advance.)
    local f
    f=$(mktemp "$dir/real-XXXXXXXX")
    {
        local b
        for b in "$@"; do
            printf "\\$(printf '%03o' "$b")"
        done
        cat
    } >"$f"
}

# The body of an armored file (between the BEGIN and END lines), decoded.
unarmor() {
    sed -e '/^-----/d' -e '/^[A-Za-z-]*: /d' -e '/^$/d' "$1" | base64 -d
}

# Keys made here by ssh-keygen (PEM and PKCS#8, unencrypted): mode 3 of
# key_file_fuzz; the openssh-key-v1 seeds, encrypted ones included, come
# from the target's own writer (its passphrase "pw" is too short for
# ssh-keygen, and its KDF is a cheap stand-in for bcrypt).
make_keys() {
    local k=$work/keys spec type bits
    mkdir -p "$k"
    for spec in ecdsa:256 ecdsa:384 ecdsa:521 rsa:2048; do
        type=${spec%%:*}
        bits=${spec#*:}
        ssh-keygen -q -t "$type" -b "$bits" -m PEM -N '' -C "" -f "$k/${type}${bits}_pem"
        ssh-keygen -q -t "$type" -b "$bits" -m PKCS8 -N '' -C "" -f "$k/${type}${bits}_pkcs8"
    done
    ssh-keygen -q -t ed25519 -N '' -C "fuzz ed25519" -f "$k/ed25519_plain"
}

# The seeds of the file-parsing targets, written into $2.
file_seeds() {
    local t=$1 out=$2 f
    case $t in
        moduli_fuzz)
            seed "$out" <"$data/moduli_sample"
            head -n 3 "$data/moduli_sample" | seed "$out"
            ;;
        key_file_fuzz)
            for f in "$data"/keys/*_key; do
                seed "$out" 0 <"$f"
            done
            # mode 3: label byte (0 PRIVATE KEY, 2 RSA PRIVATE KEY, 3 EC
            # PRIVATE KEY), then the DER.
            for f in "$work"/keys/*_pem; do
                if [[ $f == *rsa* ]]; then unarmor "$f" | seed "$out" 3 2; else unarmor "$f" | seed "$out" 3 3; fi
            done
            for f in "$work"/keys/*_pkcs8; do
                unarmor "$f" | seed "$out" 3 0
            done
            ;;
        public_key_fuzz)
            for f in "$data"/keys/*.pub "$work"/keys/*.pub; do
                seed "$out" 1 <"$f"
                printf 'host.example,10.0.0.1 %s' "$(cut -d' ' -f1,2 "$f")" | seed "$out" 1
                printf 'restrict,command="echo hi",from="10.0.0.0/8" %s' "$(cut -d' ' -f1,2 "$f")" | seed "$out" 1
            done
            for f in "$data"/keys/*.sig; do
                unarmor "$f" | seed "$out" 2
                seed "$out" 3 <"$f"
            done
            ;;
        ssh_config_fuzz)
            for f in "$data"/ssh/dump/*.conf; do
                seed "$out" 0 <"$f"
            done
            printf -- '-p\0002222\000-o\000Ciphers=aes128-ctr\000-J\000jump.example\000-L\0008080:localhost:80\000user@web1.example.com' | seed "$out" 1
            printf -- '-vvv\000-oProxyCommand=nc %%h %%p\000ssh://bob@[::1]:2200' | seed "$out" 1
            printf 'HostKeyAlgorithms ^ssh-ed25519,rsa-sha2-512' | seed "$out" 2
            printf 'LocalForward [::1]:8080 example.com:80' | seed "$out" 2
            ;;
        known_hosts_fuzz)
            {
                for f in "$data"/keys/ed25519_plain_key.pub "$data"/keys/ecdsa256_plain_key.pub "$data"/keys/rsa2048_plain_key.pub; do
                    echo "host.example,10.0.0.1 $(cut -d' ' -f1,2 "$f")"
                    echo "[host.example]:2222 $(cut -d' ' -f1,2 "$f")"
                done
                echo "@revoked * $(cut -d' ' -f1,2 "$data/keys/ecdsa256_plain_key.pub")"
                echo "@cert-authority *.example $(cut -d' ' -f1,2 "$data/keys/ed25519_plain_key.pub")"
                echo "!bad.example,*.example,a? $(cut -d' ' -f1,2 "$data/keys/rsa2048_plain_key.pub")"
            } >"$work/known_hosts"
            seed "$out" <"$work/known_hosts"
            cp "$work/known_hosts" "$work/known_hosts_hashed"
            ssh-keygen -q -H -f "$work/known_hosts_hashed" >/dev/null 2>&1
            seed "$out" <"$work/known_hosts_hashed"
            ;;
        sshd_config_fuzz)
            [ -f /usr/share/openssh/sshd_config ] && seed "$out" </usr/share/openssh/sshd_config
            cat <<'EOF' | seed "$out"
Port 2222
ListenAddress 127.0.0.1
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
AuthenticationMethods publickey,password publickey,keyboard-interactive:pam
KexAlgorithms -diffie-hellman*
Ciphers ^aes256-gcm@openssh.com
RekeyLimit 16M 1h
MaxStartups 10:30:100
AllowUsers alice bob@192.0.2.*
Match User alice Address 192.0.2.0/24,!192.0.2.7
    ForceCommand internal-sftp
    PasswordAuthentication no
Match Group wheel Host *.example.org LocalPort 22
    AuthorizedKeysFile .ssh/authorized_keys2 %h/.ssh/keys_%u
Match all
    Banner none
EOF
            ;;
        authorized_keys_fuzz)
            local key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPYXIu29X3djeHwEHdk15bEfGrGGi4DEHWJWK7lkXfKh"
            printf '%s alice@example\n' "$key" | seed "$out"
            printf '# comment\n\nrestrict,pty,command="echo \\"hi\\"",from="192.0.2.0/24,!192.0.2.7",environment="LANG=C",expiry-time="20991231" %s\n' "$key" | seed "$out"
            printf 'no-port-forwarding,permitopen="host:22",permitlisten="8080",principals="a,b",tunnel="1" %s\n' "$key" | seed "$out"
            printf 'cert-authority %s\n%s\n' "$key" "$(cat "$data/keys/ecdsa256_plain_key.pub")" | seed "$out"
            # The CA of the target's fixed certificate (tests/data/certs), on
            # cert-authority lines and as a principals file's lines.
            local ca
            ca=$(cut -d' ' -f1,2 "$data/certs/ca_ed25519.pub")
            printf 'cert-authority %s\n' "$ca" | seed "$out"
            printf 'cert-authority,principals="alice,carol",from="192.0.2.0/24" %s\n' "$ca" | seed "$out"
            printf 'restrict,pty alice\nbob\n' | seed "$out"
            ;;
        rhosts_fuzz)
            printf 'client.example\n' | seed "$out"
            printf '# equiv\n\n192.0.2.7 alice\n-other.example\n+client.example +alice\n' | seed "$out"
            printf 'NO_PLUS\n-client.example\nclient.example -bob\nclient.example alice extra\n+\n' | seed "$out"
            printf '@hosts @users\nCLIENT.EXAMPLE\n' | seed "$out"
            ;;
        keygen_import_fuzz)
            for f in "$data"/keys/*_plain_key.pub "$data"/certs/*-cert.pub; do
                [ -f "$f" ] && ssh-keygen -e -f "$f" 2>/dev/null | seed "$out"
            done
            printf -- '---- BEGIN SSH2 PUBLIC KEY ----\nComment: "a \\\nb"\nx-y: z\n%s\n---- END SSH2 PUBLIC KEY ----\n' \
                "$(cut -d' ' -f2 "$data/certs/ca_ed25519.pub")" | seed "$out"
            ;;
        allowed_signers_fuzz)
            # The first byte picks the principal asked for (0: none).
            local ca user cert
            ca=$(cut -d' ' -f1,2 "$data/certs/ca_ed25519.pub")
            user=$(cut -d' ' -f1,2 "$data/certs/user_ed25519.pub")
            cert=$(cut -d' ' -f1,2 "$data/certs/user_ed25519-cert.pub")
            printf 'alice %s\n' "$user" | seed "$out" 1
            printf '# signers\n*@example.com,!mallory namespaces="git,file" %s comment\n' "$user" | seed "$out" 0
            printf 'alice,b* cert-authority %s\n' "$ca" | seed "$out" 2
            printf 'alice cert-authority,namespaces="git",valid-after="20200101",valid-before="20990101Z" %s\n' "$ca" | seed "$out" 0
            printf '"quoted name" %s\nbob %s\n' "$user" "$cert" | seed "$out" 3
            printf 'alice frobnicate %s\nalice\nalice cert-authority\n' "$user" | seed "$out" 1
            ;;
        certificate_fuzz)
            for f in "$data"/certs/*-cert.pub; do
                cut -d' ' -f2 "$f" | base64 -d | seed "$out"
            done
            ;;
        krl_fuzz)
            for f in "$data"/keys/krl/*.krl; do
                seed "$out" 0 <"$f"
                # The sections alone: skip magic (8), version (4), serial,
                # date, flags (8 each), then the reserved and comment strings.
                local off=36 len i
                for i in 1 2; do
                    len=$(od -An -tu4 --endian=big -j "$off" -N4 "$f" | tr -d ' ')
                    off=$((off + 4 + len))
                done
                tail -c +"$((off + 1))" "$f" | seed "$out" 1
            done
            for f in "$data"/keys/*_plain_key.pub; do
                seed "$out" 0 <"$f"
            done
            ;;
    esac
}

make_keys
for t in "${targets[@]}"; do
    bin=$(fuzz_binary "$t")
    [ -x "$bin" ] || { echo "fuzz/make_corpora.sh: $bin is not built" >&2; exit 1; }
    seeds=$work/$t.seeds
    found=$work/$t.found
    out=$work/$t.out
    mkdir -p "$seeds" "$found" "$out"
    # A target with a seed writer writes and exits; one without runs nothing.
    LONGHAUL_FUZZ_WRITE_SEEDS=$seeds "$bin" -runs=0 >"$work/$t.seedlog" 2>&1 ||
        { cat "$work/$t.seedlog" >&2; exit 1; }
    file_seeds "$t" "$seeds"
    nseeds=$(find "$seeds" -type f | wc -l)
    # shellcheck disable=SC2046
    "$bin" $(fuzz_common_options "$t") -max_total_time="$seconds" -artifact_prefix="$work/$t-" \
        "$found" "$seeds" >"$work/$t.log" 2>&1 || {
        tail -n 60 "$work/$t.log" >&2
        echo "fuzz/make_corpora.sh: $t found something: fix it first (input in $work, kept)" >&2
        trap - EXIT
        exit 1
    }
    # shellcheck disable=SC2046
    # Edges only (-use_counters=0): every edge stays covered, hit-count
    # variants are dropped, which halves the corpus.
    "$bin" $(fuzz_common_options "$t") -use_counters=0 -merge=1 "$out" "$seeds" "$found" >"$work/$t.merge" 2>&1
    rm -rf -- "${FUZZ_CORPORA:?}/$t"
    mkdir -p "$FUZZ_CORPORA/$t"
    cp -- "$out"/* "$FUZZ_CORPORA/$t"/
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
    printf '%-22s %4d seeds, %9s executions in %ss (no finding), %5d new -> %4d files, %s bytes\n' "$t" "$nseeds" \
        "${execs:-?}" "$seconds" "$(find "$found" -type f | wc -l)" "$(find "$FUZZ_CORPORA/$t" -type f | wc -l)" \
        "$(du -sb "$FUZZ_CORPORA/$t" | cut -f1)"
done
