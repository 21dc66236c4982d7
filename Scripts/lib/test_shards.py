#!/usr/bin/env python3
"""Shards for Scripts/test: plan them from the suite's test list and a durations table, then check and sum up
what the shards ran.

  test_shards.py plan [--serial-shards S] LIST DURATIONS K OUTDIR [SERIAL [CPU_FIRST]]
                                                writes OUTDIR/shard-N.classes (the shard's classes, comma-separated:
                                                the XCTest bundle's argument) and prints one line per shard; the
                                                classes named in SERIAL (one Module.Class a line) go to shards
                                                K+1..K+S (S, default 1, spread like the others), which Scripts/test
                                                runs together after the others (or, with S = 1, alongside them with
                                                the CPU first); the classes named in CPU_FIRST may join shard K+1
                                                then, to balance it. A SERIAL line "Module.Class alone" puts that
                                                class in one last shard, run after those with nothing beside it.
                                                OUTDIR/phases says which shards run together, in which order
  test_shards.py check LIST OUTDIR K            reads OUTDIR/shard-N.log: per-shard and total summary lines;
                                                fails (exit 1) when a shard failed, or when a test of LIST did not
                                                run in any shard; writes OUTDIR/durations.tsv (measured per class)

LIST is `swift test list` output ("Module.Class/testMethod" per line). DURATIONS is the checked-in table
(Tests/test-durations.tsv: "seconds<TAB>Module.Class" per line, '#' comments). A class missing from the table
still runs: it is planned with the median duration of the table (so a new slow class costs balance, never
coverage). Greedy longest-first: each class, longest first, goes to the shard with the least time so far; the
CPU_FIRST classes last, each to the least loaded of all K+1 shards (shard K+1 starting with the SERIAL classes).
"""
import os
import re
import statistics
import sys


def read_list(path):
    """Test cases by class: {"Module.Class": ["testA", ...]} in listing order. Any other line is an error: the
    shards run the XCTest bundle, so a test of another kind (swift-testing's @Test) would silently not run."""
    classes = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            m = re.fullmatch(r"([A-Za-z_][\w]*\.[A-Za-z_][\w]*)/([A-Za-z_][\w]*)", line)
            if not m:
                sys.exit(f"test_shards: '{line}' in the test list is not an XCTest case (Module.Class/test); "
                         "the shards cannot run it: run `MV_TEST_SHARDS=1 Scripts/test`, or teach the shards")
            classes.setdefault(m.group(1), []).append(m.group(2))
    return classes


def read_durations(path):
    table = {}
    if not os.path.exists(path):
        return table
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            seconds, name = line.split(None, 1)
            table[name.strip()] = float(seconds)
    return table


def read_serial(path):
    """The classes named in SERIAL or CPU_FIRST (one a line, '#' comments), without their marks."""
    return set(read_marked(path))


def read_marked(path):
    """{class: mark}: a line is "Module.Class" (mark "") or "Module.Class alone" (mark "alone")."""
    marked = {}
    if not path or not os.path.exists(path):
        return marked
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) > 2 or (len(words) == 2 and words[1] != "alone"):
                sys.exit(f"test_shards: '{line.strip()}' in {os.path.basename(path)}: a line is "
                         "'Module.Class' or 'Module.Class alone'")
            marked[words[0]] = words[1] if len(words) == 2 else ""
    return marked


def plan(list_path, durations_path, k, outdir, serial_path=None, first_path=None, serial_shards=1):
    classes = read_list(list_path)
    marked = read_marked(serial_path)
    serial = set(marked)
    first = read_serial(first_path) - serial if serial else set()
    for path, named in ((serial_path, serial), (first_path, first)):
        unknown_named = sorted(named - set(classes))
        if unknown_named:
            sys.exit(f"test_shards: {os.path.basename(path)} names classes that are not in the test list: "
                     f"{' '.join(unknown_named)}")
    if not classes:
        sys.exit("test_shards: the test list is empty (swift test list printed no Module.Class/test lines)")
    table = read_durations(durations_path)
    default = statistics.median(table.values()) if table else 1.0
    estimate = {c: table.get(c, default) for c in classes}
    unknown = sorted(c for c in classes if c not in table)
    shards = [{"seconds": 0.0, "classes": []} for _ in range(k)]
    def place(names, among):
        for c in sorted(names, key=lambda c: (-estimate[c], c)):
            target = min(among, key=lambda s: s["seconds"])
            target["classes"].append(c)
            target["seconds"] += estimate[c]
    place([c for c in classes if c not in serial and c not in first], shards)
    # The SERIAL classes marked "alone" get one shard after the side-by-side ones (not with CPU_FIRST, whose one
    # shard runs alongside the others and takes every SERIAL class).
    alone = {c for c, mark in marked.items() if mark == "alone"} if not first else set()
    side_by_side = serial - alone
    if side_by_side:
        serial_part = [{"seconds": 0.0, "classes": []} for _ in range(max(1, min(serial_shards, len(side_by_side))))]
        place(side_by_side, serial_part)
        shards.extend(serial_part)
        place(first, shards)
    phases = [("parallel", list(range(1, k + 1))), ("side-by-side", list(range(k + 1, len(shards) + 1)))]
    if alone:
        shards.append({"seconds": sum(estimate[c] for c in alone), "classes": sorted(alone)})
        phases.append(("alone", [len(shards)]))
    os.makedirs(outdir, exist_ok=True)
    # The phases Scripts/test runs one after another, the shards of a phase side by side: "NAME N N ..." a line.
    with open(os.path.join(outdir, "phases"), "w") as f:
        for name, numbers in phases:
            if numbers:
                f.write(f"{name} {' '.join(map(str, numbers))}\n")
    for n, shard in enumerate(shards, 1):
        with open(os.path.join(outdir, f"shard-{n}.classes"), "w") as f:
            f.write(",".join(sorted(shard["classes"])) + "\n")
        kind = " (SERIAL classes, alone)" if alone and n == len(shards) else " (SERIAL classes)" if serial and n > k else ""
        print(f"shard {n}{kind}: {len(shard['classes'])} classes, "
              f"{sum(len(classes[c]) for c in shard['classes'])} tests, about {shard['seconds']:.0f} s by the table")
    if unknown:
        print(f"not in {os.path.basename(durations_path)} (planned at {default:.1f} s each; "
              f"refresh the table): {' '.join(unknown)}")


SUITE_END = re.compile(r"^Test Suite '([^']+)' (passed|failed) at ")
EXECUTED = re.compile(r"^\s*Executed (\d+) tests?, with (\d+) failures? \((\d+) unexpected\) in ([\d.]+) ")
CASE_END = re.compile(r"^Test Case '([^']+)' (passed|failed|skipped) \(([\d.]+) seconds\)")


def read_shard_log(path):
    """(cases {"Class.test": outcome}, class seconds {"Class": s}, exit status or None)."""
    cases, seconds, status = {}, {}, None
    if not os.path.exists(path):
        return cases, seconds, status
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = CASE_END.match(line)
        if m:
            cases[m.group(1)] = m.group(2)
            continue
        m = SUITE_END.match(line)
        if m and i + 1 < len(lines):
            e = EXECUTED.match(lines[i + 1])
            if e and not m.group(1).endswith(".xctest") and m.group(1) not in ("All tests", "Selected tests"):
                seconds[m.group(1)] = float(e.group(4))
    status_path = path[: -len(".log")] + ".status"
    if os.path.exists(status_path):
        with open(status_path) as f:
            status = int(f.read().strip() or "1")
    return cases, seconds, status


def check(list_path, outdir, k):
    classes = read_list(list_path)
    listed = {f"{c.split('.', 1)[1]}.{t}" for c, tests in classes.items() for t in tests}
    ran, measured, bad = {}, {}, []
    total_failed = 0
    for n in range(1, k + 1):
        log = os.path.join(outdir, f"shard-{n}.log")
        cases, seconds, status = read_shard_log(log)
        wall = ""
        wall_path = os.path.join(outdir, f"shard-{n}.seconds")
        if os.path.exists(wall_path):
            with open(wall_path) as f:
                wall = f"{f.read().strip()} s wall, "
        failed = sorted(c for c, o in cases.items() if o == "failed")
        total_failed += len(failed)
        ok = status == 0 and not failed
        if not ok:
            bad.append(n)
        print(f"shard {n}: {'passed' if ok else 'FAILED'}: {len(cases)} tests, {len(failed)} failed, "
              f"{wall}{sum(seconds.values()):.1f} s in tests, exit {status if status is not None else 'unknown'}"
              f" ({log})")
        for c in failed:
            print(f"    failed: {c}")
        for c, o in cases.items():
            ran[c] = o
        measured.update(seconds)
    missing = sorted(listed - set(ran))
    with open(os.path.join(outdir, "durations.tsv"), "w") as f:
        f.write("# Seconds per test class (Module.Class), for Scripts/test to balance its shards (greedy, longest first).\n"
                "# Measured by a sharded run of Scripts/test; refresh with: "
                "cp .build/test-shards/durations.tsv Tests/test-durations.tsv\n")
        for c in sorted(classes, key=lambda c: (-measured.get(c.split(".", 1)[1], 0.0), c)):
            short = c.split(".", 1)[1]
            if short in measured:
                f.write(f"{measured[short]:.3f}\t{c}\n")
    print(f"total: {len(ran)} of {len(listed)} listed tests ran in {k} shards, {total_failed} failed, "
          f"{sum(measured.values()):.1f} s in tests")
    if missing:
        print(f"NOT RUN ({len(missing)} listed tests ran in no shard):")
        for c in missing:
            print(f"    {c}")
    return 0 if not bad and not missing else 1


def main(argv):
    serial_shards = 1
    if len(argv) > 3 and argv[1] == "plan" and argv[2] == "--serial-shards":
        serial_shards = int(argv[3])
        argv = argv[:2] + argv[4:]
    if len(argv) in (6, 7, 8) and argv[1] == "plan":
        plan(argv[2], argv[3], int(argv[4]), argv[5], *argv[6:], serial_shards=serial_shards)
        return 0
    if len(argv) == 5 and argv[1] == "check":
        return check(argv[2], argv[3], int(argv[4]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
