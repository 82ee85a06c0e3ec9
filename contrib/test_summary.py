#!/usr/bin/env python3
"""The summary contrib/run-tests.sh prints at the end (docs/TESTING.md).

test_summary.py RESULTS_DIR ALLOW_SKIP WALL_SECONDS

RESULTS_DIR holds, per ctest run NAME (main: build/ but the WAN tests,
wan_light: build/'s WAN test run beside the sanitizer builds, wan: the
other WAN tests, asan: build-asan/),
NAME.xml (ctest --output-junit), NAME.json (ctest --show-only=json-v1, for
the labels), NAME.rc (ctest's status) and skips.NAME.log (LONGHAUL_SKIP_LOG:
every skip its tests recorded, "test: reason"); fuzz.targets / fuzz.rc for
the fuzz stage; tsan.rc / tsan.log for the ThreadSanitizer stage;
skips.run-tests.log (stages this machine cannot run);
omitted (stages left out on request, "stage: why" a line); times (the
wall seconds of each build and test phase, "phase seconds" a line).

Prints what ran per stage (unit, regress, asan, tsan, fuzz), what was skipped and
why, and exits 1 if a stage failed, or if anything was skipped and
ALLOW_SKIP is not 1.
"""
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return default


def ctest_labels(path):
    """Test name -> set of labels, from ctest --show-only=json-v1."""
    labels = {}
    text = read(path, "{}")
    try:
        # (ctest may print "Internal ctest changing into directory" first.)
        data = json.loads(text[text.find("{"):])
    except json.JSONDecodeError:
        return labels
    for t in data.get("tests", []):
        names = set()
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                names.update(p.get("value") or [])
        labels[t.get("name")] = names
    return labels


def ctest_results(path):
    """[(name, status, output)] from ctest's JUnit file; status is
    passed, failed or skipped."""
    out = []
    try:
        root = ET.parse(path).getroot()
    except (FileNotFoundError, ET.ParseError):
        return out
    for tc in root.iter("testcase"):
        status = tc.get("status", "")
        if status == "run":
            status = "passed"
        elif status == "fail":
            status = "failed"
        elif status in ("notrun", "disabled"):
            status = "skipped"
        # A test that timed out or failed has a <failure>; one skipped by
        # SKIP_RETURN_CODE a <skipped>.
        if tc.find("failure") is not None:
            status = "failed"
        elif tc.find("skipped") is not None:
            status = "skipped"
        text = tc.findtext("system-out") or ""
        out.append((tc.get("name"), status, text))
    return out


DOCTEST_CASES = re.compile(r"^\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed", re.M)
REGRESS_CHECKS = re.compile(r"^(\d+) checks, (\d+) failed", re.M)
PROBE_COMBOS = re.compile(r"^(\d+) combinations: (\d+) passed", re.M)


def describe(tests):
    """'N passed, F failed, S skipped (X doctest cases, Y checks)'."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    cases = checks = 0
    for _, status, text in tests:
        counts[status] = counts.get(status, 0) + 1
        for m in DOCTEST_CASES.finditer(text):
            cases += int(m.group(2))
        for m in REGRESS_CHECKS.finditer(text):
            checks += int(m.group(1))
        for m in PROBE_COMBOS.finditer(text):
            checks += int(m.group(2))
    s = f"{len(tests)} ctest tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    extra = []
    if cases:
        extra.append(f"{cases} doctest cases passed")
    if checks:
        extra.append(f"{checks} regress checks")
    return s + (f" ({', '.join(extra)})" if extra else "")


def skip_reason(name, text, logged):
    """Why ctest reports NAME as skipped: its own log entry, else the last
    SKIP line of its output."""
    for entry in logged:
        if entry.startswith(name + ": "):
            return entry[len(name) + 2:]
    lines = [l.strip() for l in text.splitlines() if "SKIP" in l]
    return lines[-1] if lines else "exit 77 (no reason printed)"


def unique_lines(text):
    out = []
    for line in text.splitlines():
        if line and line not in out:
            out.append(line)
    return out


def main():
    results, allow, wall = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
    # The run's own status: a failed build (or any step that stopped the
    # run) is a failure even when no test failed, or none ran.
    run_rc = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    stage_lines, skipped, failed = [], [], []

    def add_ctest_stage(stage, file_stems, select=None):
        """One stage's ctest results (from one or more ctest runs), and the
        skips its tests recorded in skips.FILE_STEM.log ("test: reason": a
        whole test that exited 77, a check inside a script, a doctest case)."""
        tests, logged_all = [], []
        for file_stem in file_stems:
            labels = ctest_labels(os.path.join(results, file_stem + ".json"))
            tests += [t for t in ctest_results(os.path.join(results, file_stem + ".xml"))
                      if select is None or select(labels.get(t[0], set()))]
            logged_all += unique_lines(read(os.path.join(results, f"skips.{file_stem}.log")))
        if not tests:
            return
        names = {t[0] for t in tests}
        logged = [e for e in logged_all if e.split(": ", 1)[0] in names]
        stage_lines.append(f"  {stage:<8} {describe(tests)}")
        whole = set()
        for name, status, text in tests:
            if status == "failed":
                failed.append(f"{stage}/{name}")
            elif status == "skipped":
                whole.add(name)
                skipped.append(f"{stage}/{name}: {skip_reason(name, text, logged)}")
        # Skips inside tests that ctest counted as run.
        for entry in logged:
            if entry.split(": ", 1)[0] not in whole:
                skipped.append(f"{stage}/{entry}")

    if os.path.exists(os.path.join(results, "main.xml")):
        add_ctest_stage("unit", ["main"], lambda l: "unit" in l)
        add_ctest_stage("regress", ["main"], lambda l: "unit" not in l)
    # The emulated-WAN tests: those that judge throughput alone after the
    # sanitizer builds, the light one (wan_light) beside them.
    add_ctest_stage("wan", ["wan_light", "wan"])
    add_ctest_stage("asan", ["asan"])
    if os.path.exists(os.path.join(results, "tsan.rc")):
        rc = read(os.path.join(results, "tsan.rc")).strip()
        log = read(os.path.join(results, "tsan.log"))
        cases = re.findall(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed", log)
        ran = sum(int(c[1]) for c in cases)
        state = "passed" if rc == "0" else "FAILED"
        stage_lines.append(f"  {'tsan':<8} crypto engine tests under ThreadSanitizer: {state} ({ran} doctest cases passed)")
        if rc != "0":
            failed.append("tsan")
    if os.path.exists(os.path.join(results, "fuzz.rc")):
        targets = read(os.path.join(results, "fuzz.targets")).split()
        if not targets:  # the stage failed before listing them
            targets = sorted(os.path.basename(t) for t in glob.glob("build-asan/fuzz/*_fuzz") + glob.glob("build-fuzz/fuzz/*_fuzz"))
        rc = read(os.path.join(results, "fuzz.rc")).strip()
        state = "all passed" if rc == "0" else "FAILED"
        stage_lines.append(f"  {'fuzz':<8} {len(targets)} targets, {state}: {' '.join(targets)}")
        if rc != "0":
            failed.append("fuzz")
    for stage in ("main", "wan_light", "wan", "asan"):
        rc = read(os.path.join(results, stage + ".rc")).strip()
        if rc not in ("", "0") and not failed:
            failed.append(f"{stage} ctest exited {rc}")
    # Skips recorded by run-tests.sh itself (a stage this machine cannot run).
    skipped += unique_lines(read(os.path.join(results, "skips.run-tests.log")))
    omitted = unique_lines(read(os.path.join(results, "omitted")))

    print()
    print(f"== Test summary ({wall // 60} min {wall % 60} s)")
    for l in stage_lines:
        print(l)
    if not stage_lines:
        print("  nothing ran")
    for o in omitted:
        print(f"  not run on request: {o}")
    times = [l.rsplit(" ", 1) for l in unique_lines(read(os.path.join(results, "times")))]
    if times:
        print("  time:    " + ", ".join(f"{p} {int(s) // 60}:{int(s) % 60:02d}" for p, s in times))
    if failed:
        print(f"  FAILED: {', '.join(failed)}")
    if skipped:
        print(f"  skipped ({len(skipped)}):")
        for s in skipped:
            print(f"    {s}")
    else:
        print("  skipped: none")
    if failed:
        return 1
    if run_rc != 0:
        print(f"FAIL: the run stopped early (status {run_rc}; a failed build stops it: see the log above)")
        return run_rc
    if skipped and not allow:
        print("FAIL: tests were skipped. Install what they need (contrib/install-deps.sh, root, /dev/net/tun),")
        print("      or pass --allow-skip (LONGHAUL_ALLOW_SKIP=1) on a machine that cannot run them.")
        return 1
    print("PASS" + (" (skips allowed)" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
