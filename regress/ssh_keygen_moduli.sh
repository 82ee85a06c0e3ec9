#!/usr/bin/env bash
# ssh-keygen -M generate and -M screen (moduli for DH group exchange)
# beside Debian's: our candidates for a fixed start point against Debian's
# (recorded below: its sieve takes minutes here, ours about 20 s), each
# program screening the other's candidates with the same output apart from
# the timestamp column, every safe prime we write accepted again by
# Debian's screening, the -O options (lines, start-line, generator,
# checkpoint, prime-tests), standard input, -v, and the messages and exit
# statuses of bad usages. LONGHAUL_MODULI_SLOW=1 also runs Debian's
# generation (minutes) and compares its file with ours line by line.
# Nothing is written outside the test's own directory.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
OURS=$BUILD/bin/ssh-keygen
THEIRS=$LH_SSH_KEYGEN
[ -x "$OURS" ] || lh_fail "ssh-keygen not built ($OURS)"
[ -x "$THEIRS" ] || lh_skip "OpenSSH ssh-keygen not found at $THEIRS (openssh-client)"

T=$LH_TMP
cd "$T" || exit 1

# A 511-bit start point (q's size for 512-bit moduli, the smallest allowed).
START=6$(printf 'A5%.0s' $(seq 1 63))B
# Debian 12's "ssh-keygen -M generate -O bits=512 -O start=$START": its
# file without the timestamp column, by line count and SHA-256.
DEBIAN_LINES=3447
DEBIAN_SHA256=2e801999453e89e25e909767e11f3bd0412ae3164b5913c3ac06e5e7b67f8e1f

# moduli lines without their timestamps; log lines without times.
untimed() { cut -d' ' -f2- "$1"; }
# CR LF line ends are kept: both programs' log lines end so.
masked() {
    sed -e 's/^[A-Z][a-z][a-z] [A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]\{8\} [0-9]\{4\} /TIME /' \
        -e 's/in [0-9]* seconds/in N seconds/' "$1"
}

check_generate() {
    "$OURS" -M generate -O bits=512 -O start="$START" cand.ours 2>gen.err || return 1
    [ "$(wc -l <cand.ours)" = "$DEBIAN_LINES" ] || { echo "lines: $(wc -l <cand.ours)"; return 1; }
    [ "$(untimed cand.ours | sha256sum | cut -d' ' -f1)" = "$DEBIAN_SHA256" ] || return 1
    # Candidate lines: type 4, sieved (2), the small primes tried, q's MSB.
    grep -qv '^[0-9]\{14\} 4 2 203277289 510 0 [0-9A-F]\{128\}$' cand.ours && return 1
    diff <(masked gen.err | tr -d "\r") - <<EOF2
TIME Sieve next 4177920 plus 511-bit
TIME Sieved with 203277289 small primes in N seconds
TIME Found $DEBIAN_LINES candidates
EOF2
}
lh_check "generate: Debian's candidates for the same start point" check_generate

# Both screen the same file at once (two cores); the same output but for
# the timestamps, and the same log apart from times.
screen_both() { # name input-file [options...]
    local name=$1 in=$2
    shift 2
    rm -f "$name.ours" "$name.theirs"
    "$OURS" -M screen -f "$in" "$@" "$name.ours" 2>"$name.ours.err" &
    local pid=$!
    "$THEIRS" -M screen -f "$in" "$@" "$name.theirs" 2>"$name.theirs.err"
    local theirs_rc=$?
    wait "$pid"
    local ours_rc=$?
    [ "$ours_rc" = "$theirs_rc" ] || { echo "$name: status $ours_rc, Debian's $theirs_rc"; return 1; }
    diff <(untimed "$name.ours") <(untimed "$name.theirs") || return 1
    diff <(masked "$name.ours.err") <(masked "$name.theirs.err")
}

check_screen_candidates() {
    [ -s cand.ours ] || return 1
    screen_both safe cand.ours -O prime-tests=4 || return 1
    [ -s safe.ours ] || { echo "no safe prime found"; return 1; }
    # Every safe prime we wrote, accepted again by Debian's screening.
    rm -f again.theirs
    "$THEIRS" -M screen -f safe.ours -O prime-tests=4 again.theirs 2>/dev/null || return 1
    [ "$(wc -l <again.theirs)" = "$(wc -l <safe.ours)" ] || return 1
    diff <(cut -d' ' -f7 again.theirs) <(cut -d' ' -f7 safe.ours) || return 1
    # Re-screened lines: tests stay 6, trials add up (4 + 4).
    ! grep -qv '^[0-9]\{14\} 2 6 8 511 [25] ' again.theirs
}
lh_check "screen: our candidates, by ours and by Debian's" check_screen_candidates

check_screen_debian_candidates() {
    # Lines 1-10, 84-88 and 122-126 of Debian's candidate file for $START
    # (lines 7, 86 and 124 are safe primes' q).
    cat >cand.theirs <<'EOF2'
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5BDB
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A6745
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A6D7B
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A7321
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A7657
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A77CB
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A7DE3
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A8437
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A8851
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A8B15
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5BC069
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5BC423
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5BC6AB
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5BC951
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5BCF39
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5C8747
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5C8915
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5C893F
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5C8DC5
20261206112545 4 2 203277289 510 0 6A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5C98E7
EOF2
    screen_both slice cand.theirs -O prime-tests=5 -v || return 1
    [ "$(wc -l <slice.ours)" = 3 ] || return 1
    # The same lines of ours, as they are in Debian's file.
    diff <(sed -n '1,10p;84,88p;122,126p' cand.ours | cut -d' ' -f2-) <(untimed cand.theirs)
}
lh_check "screen: Debian's candidate lines, -v, prime-tests=5" check_screen_debian_candidates

check_screen_options() {
    [ -s cand.ours ] || return 1
    screen_both lines cand.ours -O start-line=100 -O lines=300 -O prime-tests=4 -v || return 1
    screen_both gen2 cand.ours -O generator=2 -O lines=500 -O prime-tests=4 || return 1
    screen_both gen5 cand.ours -O generator=5 -O lines=500 -O prime-tests=4 || return 1
    # A checkpoint: both resume after its line, and remove it when done.
    echo 200 >cp.ours && echo 200 >cp.theirs || return 1
    rm -f cp.o cp.t
    "$OURS" -M screen -f cand.ours -O lines=400 -O prime-tests=4 -O checkpoint=cp.ours cp.o 2>cp.o.err || return 1
    "$THEIRS" -M screen -f cand.ours -O lines=400 -O prime-tests=4 -O checkpoint=cp.theirs cp.t 2>cp.t.err || return 1
    [ ! -e cp.ours ] && [ ! -e cp.theirs ] || return 1
    diff <(untimed cp.o) <(untimed cp.t) || return 1
    diff <(masked cp.o.err | sed 's/cp\.ours/CP/') <(masked cp.t.err | sed 's/cp\.theirs/CP/')
}
lh_check "screen: start-line, lines, generator, checkpoint" check_screen_options

check_screen_stdin() {
    [ -s cand.ours ] || return 1
    head -n 300 cand.ours >part
    rm -f in1.o in1.t in2.o in2.t
    "$OURS" -v -M screen -O prime-tests=4 in1.o <part 2>in1.o.err || return 1
    "$THEIRS" -v -M screen -O prime-tests=4 in1.t <part 2>in1.t.err || return 1
    # A pipe cannot be counted first.
    # shellcheck disable=SC2002
    cat part | "$OURS" -v -M screen -f - -O prime-tests=4 in2.o 2>in2.o.err || return 1
    # shellcheck disable=SC2002
    cat part | "$THEIRS" -v -M screen -f - -O prime-tests=4 in2.t 2>in2.t.err || return 1
    diff <(untimed in1.o) <(untimed in1.t) && diff <(untimed in2.o) <(untimed in2.t) &&
        diff <(masked in1.o.err) <(masked in1.t.err) && diff <(masked in2.o.err) <(masked in2.t.err)
}
lh_check "screen: standard input, a file and a pipe" check_screen_stdin

# Bad usages: the same standard error (CR LF included), exit status and
# files left behind, each program in a directory of its own.
same_failure() {
    local input=$1
    shift
    rm -rf o t && mkdir o t || return 1
    (cd o && "$OURS" "$@" <"$input" >../o.stdout 2>../o.stderr; echo $? >../o.rc)
    (cd t && "$THEIRS" "$@" <"$input" >../t.stdout 2>../t.stderr; echo $? >../t.rc)
    diff o.rc t.rc && diff o.stdout t.stdout && diff <(masked o.stderr) <(masked t.stderr) &&
        diff <(ls -A o) <(ls -A t) ||
        { echo "differs: $*"; return 1; }
}
check_errors() {
    local ok=0
    while IFS= read -r args; do
        # shellcheck disable=SC2086
        same_failure /dev/null $args || ok=1
    done <<'EOF2'
-M foo out
-M generate
-M generate a b
-M screen
-M generate -O foo=1 out
-M generate -O bits=100 out
-M generate -O bits=70000 out
-M generate -O memory=3 -O bits=1024 out
-M generate -O memory=128 -O bits=1024 out
-M generate -O memory=abc out
-M generate -O memory=0 out
-M generate -O start=zz out
-M generate -O bits=9999999999 out
-M generate /nonexistent/out
-M screen -O generator=0 out
-M screen -O generator=abc out
-M screen -O prime-tests=2 out
-M screen -O prime-tests=0 out
-M screen -O prime-tests=abc out
-M screen -O bogus out
-M screen -O memory=8 out
-M screen -f /nonexistent out
-M screen /nonexistent/out
-M screen -O lines=abc -O start-line=x out
-M screen -f - -
EOF2
    return $ok
}
lh_check "bad usages: messages and exit statuses as Debian's" check_errors

# The window each sizes for bits= and memory= (the default: 3072 bits),
# from the lines printed before sieving; each is stopped once it prints the
# "Sieve next" line (or after 10 s: a loaded machine may take seconds to
# get there); the lines are compared up to that
# one (the sieve itself is not compared).
sieving() { grep -q 'Sieve next' "$1"; }
first_lines() { # PROGRAM OUT ARGS...: PROGRAM -M generate ARGS, its lines up to the sieve in OUT
    local prog=$1 out=$2 pid
    shift 2
    # Emptied here, not by the background job's redirection: otherwise the
    # wait below may see the last run's "Sieve next" line and kill this
    # one before it has printed anything.
    : >"$out"
    "$prog" -M generate "$@" w.out 2>"$out" &
    pid=$!
    lh_wait_until 10 sieving "$out" || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
check_window_sizes() {
    local args ok=0
    for args in "" "-v -O bits=768" "-O memory=8 -O bits=1024" "-O memory=8 -O bits=8192" "-O memory=127 -O bits=16384"; do
        # shellcheck disable=SC2086
        first_lines "$OURS" w.ours.err $args
        # shellcheck disable=SC2086
        first_lines "$THEIRS" w.theirs.err $args
        # Up to the sieve line: a small sieve may finish before the kill.
        diff <(masked w.ours.err | sed '/Sieve next/q') <(masked w.theirs.err | sed '/Sieve next/q') || ok=1
    done
    return $ok
}
lh_check "generate: window sizes for bits= and memory=" check_window_sizes

if [ "${LONGHAUL_MODULI_SLOW:-0}" = 1 ]; then
    check_debian_generate() {
        [ -s cand.ours ] || return 1
        "$THEIRS" -M generate -O bits=512 -O start="$START" cand.theirs.full 2>/dev/null &&
            diff <(untimed cand.ours) <(untimed cand.theirs.full)
    }
    lh_check "generate (slow): Debian's file line by line" check_debian_generate
    check_random_start() {
        "$OURS" -M generate -O bits=768 r.ours 2>/dev/null &
        "$THEIRS" -M generate -O bits=768 r.theirs 2>/dev/null || return 1
        wait $! || return 1
        screen_both ro r.ours -O prime-tests=4 && screen_both rt r.theirs -O prime-tests=4
    }
    lh_check "generate (slow): random starts, screened by both" check_random_start
fi

lh_summary
