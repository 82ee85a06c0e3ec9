#!/bin/bash
# forward_table.sh RESULTS OUTDIR "IMPLS": turns contrib/bench/forward's
# results.txt (one line of key=value fields per run of a case) into
# OUTDIR/table.md: one Markdown row per case and implementation, the
# implementations of a case next to each other in IMPLS order, each figure
# the median of the case's runs; FAILED when any run of the case failed.
# Then the targets, checked against Longhaul's rows:
#   - aggregate MiB/s at 64 streams >= 2x OpenSSH's (Debian's) in the same case;
#   - ready p95 <= 10 ms;
#   - small-request p95 under bulk load <= 5 ms (<= 10 ms through 2 jumps).
# Can be re-run on an old results.txt.
set -euo pipefail

results=${1:?usage: forward_table.sh RESULTS OUTDIR IMPLS}
out=${2:?usage: forward_table.sh RESULTS OUTDIR IMPLS}
impls=${3:-"tcp longhaul openssh openssh10 hpn"}

awk -v impls="$impls" -v table="$out/table.md" '
function median(k,    n, i, j, t, a) {
    n = split(vals[k], a, " ")
    if (n == 0) return ""
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function put(k, v) { if (v == "" || v == "nan") return; vals[k] = vals[k] " " v }
function num(v, d) { return (v == "") ? "—" : sprintf("%." d "f", v) }
{
    delete f
    for (i = 1; i <= NF; i++) {
        p = index($i, "=")
        if (p > 0) f[substr($i, 1, p - 1)] = substr($i, p + 1)
    }
    if (!("impl" in f)) next
    c = f["workload"] SUBSEP f["kind"] SUBSEP f["streams"] SUBSEP f["jumps"]
    # Cases in the order they first ran; the tcp rows (kind "direct") are
    # their own cases.
    if (!(c in seen)) { seen[c] = 1; cases[++ncases] = c }
    k = c SUBSEP f["impl"]
    have[k] = 1
    runs[k]++
    put(k SUBSEP "load", f["load1"])
    if (f["status"] != "ok") { failed[k] = 1; next }
    put(k SUBSEP "mib", f["mib_s_up"])
    put(k SUBSEP "ready", f["ready_p95_ms"])
    put(k SUBSEP "small", f["small_p95_ms"])
    put(k SUBSEP "ccpu", f["client_cpu_ms_per_mib"])
    put(k SUBSEP "scpu", f["server_cpu_ms_per_mib"])
    put(k SUBSEP "lcpu", f["load_echo_cpu_ms_per_mib"])
    if (f["client_hwm_kb"] != "" && f["client_hwm_kb"] + 0 > 0) put(k SUBSEP "rss", f["client_hwm_kb"] / 1024)
}
END {
    ni = split(impls, order, " ")
    kname["local"] = "-L"; kname["remote"] = "-R"; kname["dynamic"] = "-D (SOCKS5)"; kname["direct"] = "none (TCP)"
    wname["rr"] = "request/response"; wname["duplex"] = "duplex echo"; wname["mixed"] = "mixed"
    print "| workload | forward | streams | jumps | SSH | MiB/s per direction | ×OpenSSH | ready p95 ms | small p95 ms | CPU ms/MiB ssh | CPU ms/MiB sshd | ssh peak RSS MiB | load CPU ms/MiB | runs | load |" > table
    print "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" > table
    for (ci = 1; ci <= ncases; ci++) {
        c = cases[ci]
        split(c, cc, SUBSEP)
        base = c SUBSEP "openssh"
        bm = (base in have && !(base in failed)) ? median(base SUBSEP "mib") : ""
        for (ii = 1; ii <= ni; ii++) {
            k = c SUBSEP order[ii]
            if (!(k in have)) continue
            streams = cc[3]
            if (cc[1] == "mixed") streams = cc[3] " (bulk + small)"
            row = "| " wname[cc[1]] " | " kname[cc[2]] " | " streams " | " cc[4] " | " order[ii] " | "
            if (k in failed) {
                row = row "FAILED | | | | | | | | " runs[k] " | " num(median(k SUBSEP "load"), 1) " |"
            } else {
                m = median(k SUBSEP "mib")
                ratio = (bm != "" && bm > 0 && order[ii] != "tcp") ? sprintf("%.2f", m / bm) : "—"
                row = row num(m, 1) " | " ratio " | " num(median(k SUBSEP "ready"), 1) " | " \
                    ((cc[1] == "mixed") ? num(median(k SUBSEP "small"), 1) : "—") " | " \
                    num(median(k SUBSEP "ccpu"), 2) " | " num(median(k SUBSEP "scpu"), 2) " | " \
                    num(median(k SUBSEP "rss"), 1) " | " num(median(k SUBSEP "lcpu"), 2) " | " runs[k] " | " num(median(k SUBSEP "load"), 1) " |"
            }
            print row > table
            # The targets, for Longhaul.
            if (order[ii] != "longhaul") continue
            label = wname[cc[1]] " " kname[cc[2]] " " cc[3] " streams" ((cc[4] > 0) ? ", " cc[4] " jumps" : "")
            if (k in failed) { tfail = tfail "\n  - " label ": FAILED"; continue }
            r = median(k SUBSEP "ready")
            nready++
            if (r != "" && r <= 10) okready++
            else readybad = readybad "\n  - " label ": " num(r, 1) " ms"
            if (cc[3] == 64 && cc[1] != "mixed") {
                n64++
                if (bm != "" && bm > 0) {
                    q = m / bm
                    if (q >= 2) ok64++
                    agg = agg "\n  - " label ": " num(m, 1) " against " num(bm, 1) " MiB/s, " sprintf("%.2f", q) "×" ((q >= 2) ? "" : " (below 2×)")
                } else agg = agg "\n  - " label ": " num(m, 1) " MiB/s, no OpenSSH figure"
            }
            if (cc[1] == "mixed") {
                s = median(k SUBSEP "small")
                lim = (cc[4] >= 2) ? 10 : 5
                nsmall++
                if (s != "" && s <= lim) oksmall++
                small = small "\n  - " label ": " num(s, 1) " ms (target <= " lim ")" ((s != "" && s <= lim) ? "" : " (missed)")
            }
        }
    }
    print "" > table
    if (nready + n64 + nsmall > 0 || tfail != "") {
        print "Targets (issue 11), Longhaul:" > table
        print "- aggregate at 64 streams >= 2x OpenSSH (Debian): " ok64 + 0 " of " n64 + 0 " cases" agg > table
        print "- ready p95 <= 10 ms: " okready + 0 " of " nready + 0 " cases" ((readybad != "") ? "; above:" readybad : "") > table
        print "- small-request p95 under bulk <= 5 ms (<= 10 ms through 2 jumps): " oksmall + 0 " of " nsmall + 0 " cases" small > table
        if (tfail != "") print "- failed:" tfail > table
    }
}' "$results"
