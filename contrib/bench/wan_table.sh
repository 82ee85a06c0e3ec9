#!/bin/bash
# wan_table.sh RAW.jsonl OUTDIR: turns contrib/bench/wan's measurements into
# OUTDIR/summary.json (medians, minima, maxima per cell) and OUTDIR/table.md
# (one Markdown row per RTT x rate x implementation). Can be re-run on an
# old raw.jsonl.
set -euo pipefail

raw=${1:?usage: wan_table.sh RAW.jsonl OUTDIR}
out=${2:?usage: wan_table.sh RAW.jsonl OUTDIR}

awk -v summary="$out/summary.json" -v table="$out/table.md" '
function field(line, key,    re, s) {
    re = "\"" key "\": *"
    if (!match(line, re)) return ""
    s = substr(line, RSTART + RLENGTH)
    if (substr(s, 1, 1) == "\"") { s = substr(s, 2); return substr(s, 1, index(s, "\"") - 1) }
    match(s, /^[-0-9.e+a-z]*/)
    return substr(s, 1, RLENGTH)
}
function add(k, v) { if (v == "" || v == "null") return; vals[k] = vals[k] " " v; cnt[k]++ }
# Sorted copy of the values of k in sorted[1..n]; returns n.
function sortvals(k,    n, i, j, t, a) {
    n = split(vals[k], a, " ")
    for (i = 1; i <= n; i++) sorted[i] = a[i] + 0
    for (i = 2; i <= n; i++) { t = sorted[i]; for (j = i - 1; j >= 1 && sorted[j] > t; j--) sorted[j + 1] = sorted[j]; sorted[j + 1] = t }
    return n
}
function med(k,    n) { n = sortvals(k); if (n == 0) return ""; return (n % 2) ? sorted[(n + 1) / 2] : (sorted[n / 2] + sorted[n / 2 + 1]) / 2 }
function lo(k,    n) { n = sortvals(k); return n ? sorted[1] : "" }
function hi(k,    n) { n = sortvals(k); return n ? sorted[n] : "" }
function fmt(v, d) { if (v == "") return "n/a"; return sprintf("%." d "f", v) }
# "median (min-max)" with the spread only when there is one.
function spread(k, d) {
    if (cnt[k] == 0) return "n/a"
    if (cnt[k] == 1 || lo(k) == hi(k)) return fmt(med(k), d)
    return fmt(med(k), d) " (" fmt(lo(k), d) "–" fmt(hi(k), d) ")"
}
function ratio(a, b) { if (a == "" || b == "" || b == 0) return "n/a"; return sprintf("%.2f", a / b) }
function jnum(v) { return v == "" ? "null" : v }
{
    rtt = field($0, "rtt_ms"); rate = field($0, "rate_mbit"); impl = field($0, "impl"); m = field($0, "metric")
    link = rate "|" rtt
    if (m == "ping") { add(link "|ping", field($0, "ping_ms")); next }
    c = link "|" impl
    if (!(c in seen)) { seen[c] = 1; order[++ncells] = c }
    add(c "|load", field($0, "load1"))
    if (m == "raw") { add(link "|raw", field($0, "mbit")); add(c "|raw", field($0, "mbit")); add(c "|raw_wanem", field($0, "wanem_cpu_pct")) }
    if (m == "ssh") {
        add(c "|ssh", field($0, "mbit")); add(c "|ssh_wanem", field($0, "wanem_cpu_pct"))
        # CPU per GiB is worked out at the end, once the set-up CPU of the
        # cell (from the ttfb connections) is known.
        nssh[c]++; sshb[c, nssh[c]] = field($0, "bytes")
        sshc[c, nssh[c]] = field($0, "client_cpu_s"); sshs[c, nssh[c]] = field($0, "server_cpu_s")
        add(c "|crss", field($0, "client_rss_kb") / 1024); add(c "|srss", field($0, "server_rss_kb") / 1024)
    }
    if (m == "scp") {
        add(c "|scp", field($0, "mbit"))
        gib = field($0, "bytes") / 1073741824
        if (gib > 0) { add(c "|scp_ccpu", field($0, "client_cpu_s") / gib); add(c "|scp_scpu", field($0, "server_cpu_s") / gib) }
    }
    if (m == "ttfb") {
        add(c "|ttfb", field($0, "ttfb_ms"))
        v = field($0, "client_cpu_s"); if (v != "") add(c "|setc", v * 1000)
        v = field($0, "server_cpu_s"); if (v != "") add(c "|sets", v * 1000)
    }
}
END {
    # Bulk CPU per GiB: the CPU of each ssh run less the median set-up CPU of
    # its cell (nothing subtracted where older data has no set-up figure).
    for (i = 1; i <= ncells; i++) {
        c = order[i]; sc = med(c "|setc"); ss = med(c "|sets")
        for (k = 1; k <= nssh[c]; k++) {
            gib = sshb[c, k] / 1073741824
            if (gib <= 0) continue
            if (sshc[c, k] != "") add(c "|ccpu", (sshc[c, k] - (sc == "" ? 0 : sc / 1000)) / gib)
            if (sshs[c, k] != "") add(c "|scpu", (sshs[c, k] - (ss == "" ? 0 : ss / 1000)) / gib)
        }
    }
    print "| RTT ms (ping) | link Mbit/s | SSH | raw TCP Mbit/s | ssh cat Mbit/s | ×raw | scp Mbit/s | ×raw | 2 MiB/RTT Mbit/s | TTFB ms | set-up CPU ms client / server | bulk CPU s/GiB client / server | peak RSS MiB client / server | wanem CPU % raw / ssh | runs | load |" > table
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" > table
    printf "[\n" > summary
    for (i = 1; i <= ncells; i++) {
        c = order[i]; split(c, p, "|"); rate = p[1]; rtt = p[2]; impl = p[3]; link = rate "|" rtt
        ping = med(link "|ping")
        # Throughput ceiling of a fixed 2 MiB channel window (OpenSSH): one
        # window per round trip. Meaningless when far above the link rate.
        if (ping != "" && ping > 0) {
            cap = 2 * 1048576 * 8 / (ping / 1000) / 1e6
            capstr = (cap > 10 * rate) ? "—" : sprintf("%.0f", cap)
        } else { cap = ""; capstr = "n/a" }
        rawm = med(c "|raw"); sshm = med(c "|ssh"); scpm = med(c "|scp")
        printf "| %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s / %s | %d | %s |\n", \
            rtt, fmt(ping, 1), rate, impl, spread(c "|raw", 0), spread(c "|ssh", 0), ratio(sshm, rawm), \
            spread(c "|scp", 0), ratio(scpm, rawm), capstr, fmt(med(c "|ttfb"), 0), \
            fmt(med(c "|setc"), 0), fmt(med(c "|sets"), 0), \
            fmt(med(c "|ccpu"), 2), fmt(med(c "|scpu"), 2), fmt(med(c "|crss"), 1), fmt(med(c "|srss"), 1), \
            fmt(med(c "|raw_wanem"), 0), fmt(med(c "|ssh_wanem"), 0), cnt[c "|ssh"], fmt(med(c "|load"), 1) > table
        printf "  {\"rtt_ms\": %s, \"rate_mbit\": %s, \"impl\": \"%s\", \"ping_ms\": %s, \"runs\": %d,\n", rtt, rate, impl, jnum(ping), cnt[c "|ssh"] > summary
        printf "   \"window_2mib_ceiling_mbit\": %s,\n", jnum(cap) > summary
        n = split("raw ssh scp ttfb setc sets ccpu scpu crss srss scp_ccpu scp_scpu raw_wanem ssh_wanem load", keys, " ")
        names = "raw_tcp_mbit ssh_mbit scp_mbit ttfb_ms setup_client_cpu_ms setup_server_cpu_ms ssh_client_cpu_s_per_gib ssh_server_cpu_s_per_gib ssh_client_rss_mib ssh_server_rss_mib scp_client_cpu_s_per_gib scp_server_cpu_s_per_gib wanem_cpu_pct_raw wanem_cpu_pct_ssh load1"
        split(names, jn, " ")
        for (k = 1; k <= n; k++)
            printf "   \"%s\": {\"median\": %s, \"min\": %s, \"max\": %s, \"n\": %d}%s\n", jn[k], jnum(med(c "|" keys[k])), \
                jnum(lo(c "|" keys[k])), jnum(hi(c "|" keys[k])), cnt[c "|" keys[k]], (k < n ? "," : "") > summary
        printf "  }%s\n", (i < ncells ? "," : "") > summary
    }
    printf "]\n" > summary
}' "$raw"
