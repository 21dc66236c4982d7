#!/usr/bin/env python3
"""Figures and the table of Scripts/bench-hls from its runs' files (see that script for what each means).

    bench-hls-report.py WORKDIR OUT.json SHAPE...

Per run NAME (SHAPE-given, SHAPE-estimated, SHAPE-baseline, SHAPE-schedule) WORKDIR holds NAME.status (the
player's status lines), NAME.log (one JSON line per segment request), NAME.stats (bytes served each second) and
NAME.rate (the rate or schedule, e.g. 10M@0,5M@25). Exits 1 when a goal is missed.
"""
import json, pathlib, re, statistics, sys

TOP, TOP_FOLDER = "1920x1080", "v1080"
ORDER = ["640x360", "960x540", "1280x720", "1920x1080"]


def rate_of(text):
    m = re.fullmatch(r"([0-9.]+)([kKmMgG]?)", text)
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]


def schedule_of(text):
    steps = []
    for part in text.split(","):
        r, _, at = part.partition("@")
        steps.append((float(at or 0), rate_of(r)))
    return sorted(steps)


def rate_at(schedule, t):
    rate = schedule[0][1]
    for at, r in schedule:
        if t >= at:
            rate = r
    return rate


def status(path):
    """[(t, {view: (state, resolution)}, link figure bits/s or None, kind)]"""
    out = []
    for line in path.read_text().splitlines():
        m = re.match(r"\[\s*([0-9.]+)s\] (.*)", line)
        if not m:
            continue
        views, link, kind = {}, None, None
        for part in m.group(2).split(" | "):
            words = part.split()
            if len(words) < 3 or not words[0].isdigit():
                continue
            labels = re.findall(r"\[((?:low|default|high) [^\]]*)\]", part)
            res = None
            if labels:
                r = re.search(r"(\d+x\d+)", labels[-1])
                res = r.group(1) if r else None
                f = re.search(r"link ~?([0-9.]+)([Mk]) \((est|given|measuring)\)", labels[-1])
                if f:
                    link, kind = float(f.group(1)) * (1e6 if f.group(2) == "M" else 1e3), f.group(3)
            views[int(words[0])] = (words[2], res)
        out.append((float(m.group(1)), views, link, kind))
    return out


def analyse(work, name):
    samples = status(work / f"{name}.status")
    schedule = schedule_of((work / f"{name}.rate").read_text().strip())
    requests = [json.loads(l) for l in (work / f"{name}.log").read_text().splitlines() if l.strip()]
    origin = requests[0]["t"] if requests else 0.0
    end = samples[-1][0] if samples else 0.0
    res = {"schedule": schedule}
    # High view: segments from its top rung after 10 s.
    video = [(r["t"] - origin, r["path"].split("/")[1]) for r in requests
             if r["path"].startswith("angle1/") and r["path"].split("/")[1].startswith("v")]
    late = [folder for t, folder in video if t >= 10]
    res["top_share"] = sum(1 for f in late if f == TOP_FOLDER) / len(late) if late else 0.0
    res["top_segments"] = f"{sum(1 for f in late if f == TOP_FOLDER)}/{len(late)}"
    # Stalls and time to top (status line).
    stalls, played, prev = 0, False, None
    for _, views, _, _ in samples:
        st = views.get(1, (None, None))[0]
        if st == "BUFFERING" and played and prev == "PLAYING":
            stalls += 1
        played = played or st == "PLAYING"
        prev = st
    res["stalls"] = stalls
    res["time_to_top"] = next((t for t, views, _, _ in samples if views.get(1, (None, None))[1] == TOP), None)
    # Utilisation from 5 s on, until the player stopped.
    stats = [json.loads(l) for l in (work / f"{name}.stats").read_text().splitlines() if l.strip()]
    served = [(s["t"] - origin, sum(s["bytes"].values())) for s in stats]
    window = [(t, b) for t, b in served if 5 <= t <= end - 1]
    if len(window) >= 2:
        sent = (window[-1][1] - window[0][1]) * 8
        capacity = sum(rate_at(schedule, t) * (t2 - t) for (t, _), (t2, _) in zip(window, window[1:]))
        res["utilisation"] = sent / capacity if capacity else 0.0
    else:
        res["utilisation"] = 0.0
    # Estimate error.
    changes = [at for at, _ in schedule[1:]]
    errors = [abs(link - rate_at(schedule, t)) / rate_at(schedule, t) for t, _, link, kind in samples
              if kind == "est" and t >= 10 and all(not (c <= t < c + 6) for c in changes)]
    res["estimate_error"] = statistics.median(errors) if errors else None
    res["estimate_samples"] = len(errors)
    # Lows dropping / rising after each rate change.
    res["moves"] = []
    for i, change in enumerate(changes):
        old, new = schedule[i][1], schedule[i + 1][1]
        before = [s for s in samples if s[0] <= change]
        if not before:
            continue
        start = {v: before[-1][1].get(v, (None, None))[1] for v in (2, 3, 4)}
        moved = None
        for t, views, _, _ in samples:
            if t <= change:
                continue
            for v in (2, 3, 4):
                a, b = start[v], views.get(v, (None, None))[1]
                if a in ORDER and b in ORDER and ((ORDER.index(b) < ORDER.index(a)) if new < old else (ORDER.index(b) > ORDER.index(a))):
                    moved = t - change
                    break
            if moved is not None:
                break
        res["moves"].append({"at": change, "from": old, "to": new, "lows_moved_after": moved,
                             "direction": "drop" if new < old else "rise"})
    errs = (work / f"{name}.err").read_text().splitlines()
    res["errors"] = [l for l in errs if "error" in l.lower()]
    return res


def pct(x):
    return "-" if x is None else f"{x * 100:.0f} %"


def secs(x):
    return "-" if x is None else f"{x:.0f} s"


def main():
    work, out, shapes = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
    report, goals = {}, []
    for shape in shapes:
        runs = {kind: analyse(work, f"{shape}-{kind}") for kind in ("given", "estimated", "baseline", "schedule")}
        report[shape] = runs
        title = {"paced": "paced server (hls-server.py --rate)", "tc": "kernel link (tc tbf, network namespace)"}[shape]
        rate = runs["given"]["schedule"][0][1]
        print(f"\n{title}, {rate / 1e6:g} Mbit/s")
        print(f"{'':38}{'--bandwidth given':>20}{'estimated':>14}{'baseline':>12}")
        rows = [("high: top-rung segments after 10 s", lambda r: f"{pct(r['top_share'])} ({r['top_segments']})"),
                ("high: stalls", lambda r: str(r["stalls"])),
                ("high: time to top rung", lambda r: secs(r["time_to_top"])),
                ("link utilisation from 5 s", lambda r: pct(r["utilisation"])),
                ("estimate error (median)", lambda r: pct(r["estimate_error"]))]
        for label, f in rows:
            print(f"{label:38}{f(runs['given']):>20}{f(runs['estimated']):>14}{f(runs['baseline']):>12}")
        s = runs["schedule"]
        steps = ", ".join(f"{r / 1e6:g}M@{at:g}" for at, r in s["schedule"])
        print(f"  schedule {steps} (estimated): high stalls {s['stalls']}, estimate error {pct(s['estimate_error'])}, "
              f"utilisation {pct(s['utilisation'])}, high top-rung segments {pct(s['top_share'])} ({s['top_segments']})")
        for m in s["moves"]:
            print(f"    {m['from'] / 1e6:g} -> {m['to'] / 1e6:g} Mbit/s at {m['at']:g} s: lows {m['direction']} after "
                  f"{secs(m['lows_moved_after'])}")
        e = runs["estimated"]
        goals += [(f"{shape}: high view top rung >= 95 % after 10 s (estimated)", e["top_share"] >= 0.95),
                  (f"{shape}: high view stalls = 0 (estimated)", e["stalls"] == 0),
                  (f"{shape}: utilisation >= 80 % (estimated)", e["utilisation"] >= 0.8),
                  (f"{shape}: high view stalls = 0 (schedule)", s["stalls"] == 0),
                  (f"{shape}: lows move after every rate change (schedule)",
                   all(m["lows_moved_after"] is not None for m in s["moves"]))]
        for kind, r in runs.items():
            for line in r["errors"]:
                print(f"  error line ({kind}): {line}")
    print()
    for text, ok in goals:
        print(f"  goal {text}: {'met' if ok else 'NOT met'}")
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    sys.exit(0 if all(ok for _, ok in goals) else 1)


if __name__ == "__main__":
    main()
