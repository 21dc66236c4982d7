#!/usr/bin/env python3
"""Side-by-side table for Scripts/bench-compare: bench_compare_report.py OLD OLD_DIR NEW NEW_DIR SECTIONS.

Reads what each revision's bench wrote in its out/bench (cpu.json, sync-N/summary.json, hls.json, routing.json,
audio.json). A figure a revision did not produce shows as '-'. Lower is better for every row but the HLS top-rung
share. The ratio column is NEW / OLD.
"""
import json
import pathlib
import sys


def load(path):
    try:
        return json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError):
        return None


def dig(d, *keys):
    for k in keys:
        if isinstance(d, dict) and k in d:
            d = d[k]
        elif isinstance(d, dict) and str(k) in d:
            d = d[str(k)]
        else:
            return None
    return d


def cpu_rows(d):
    c = load(d / "cpu.json")
    return [("CPU per view, multiview (% of a core)", dig(c, "median", "multiview", "cpu_per_view_pct")),
            ("CPU per view, gst-launch-1.0 (% of a core)", dig(c, "median", "gst-launch-1.0", "cpu_per_view_pct")),
            ("CPU per view ratio multiview / gst-launch", dig(c, "ratio_cpu_per_view"))]


def sync_rows(d):
    rows = []
    for n in (4, 9):
        s = load(d / f"sync-{n}" / "summary.json")
        b = load(d / f"sync-{n}" / "summary-baseline.json")
        rows += [(f"{n} views skew p50 (ms)", dig(s, "p50_skew_ms")),
                 (f"{n} views skew p99 (ms)", dig(s, "p99_skew_ms")),
                 (f"{n} views skew max (ms)", dig(s, "max_skew_ms")),
                 (f"{n} views baseline skew p50 (ms)", dig(b, "p50_skew_ms"))]
        seeks = [p for p in (dig(s, "phases") or []) if p.get("name", "").startswith("seek")]
        for p in seeks:
            rows.append((f"{n} views {p['name']} -> all aligned (ms)", p.get("time_to_aligned_ms")))
    return rows


def hls_rows(d):
    h = load(d / "hls.json")
    if h is None:
        return [("HLS high view top-rung share after 10 s", None), ("HLS high view stalls", None)]
    if "priority" in h:   # the older report: one run with the budget given
        run = dig(h, "priority", "views", 1)
        share, stalls = dig(run, "top_share"), dig(run, "stalls")
    else:                 # the newer report: paced link, budget given
        share, stalls = dig(h, "paced", "given", "top_share"), dig(h, "paced", "given", "stalls")
    return [("HLS high view top-rung share after 10 s (given link)", share),
            ("HLS high view stalls (given link)", stalls)]


def routing_rows(d):
    r = load(d / "routing.json")
    return [("routing swap, multiview median (ms)", dig(r, "multiview_median_ms")),
            ("routing swap, bare pactl move median (ms)", dig(r, "baseline_median_ms"))]


def audio_rows(d):
    a = load(d / "audio.json")
    return [("audible: coordinated clicks apart p50 (ms)", dig(a, "median", "coordinated", "p50_ms")),
            ("audible: coordinated clicks apart max (ms)", dig(a, "median", "coordinated", "max_ms")),
            ("audible: uncoordinated clicks apart p50 (ms)", dig(a, "median", "uncoordinated", "p50_ms"))]


SECTIONS = {"cpu": cpu_rows, "sync": sync_rows, "hls": hls_rows, "routing": routing_rows, "audio": audio_rows}


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (int, float)):
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def main(argv):
    old, old_dir, new, new_dir, sections = argv[1], pathlib.Path(argv[2]), argv[3], pathlib.Path(argv[4]), argv[5]
    print(f"{'figure':52}{old:>14}{new:>14}{'new/old':>10}")
    for section in sections.split(","):
        rows_old, rows_new = SECTIONS[section](old_dir), SECTIONS[section](new_dir)
        names = [r[0] for r in rows_old] + [r[0] for r in rows_new if r[0] not in {x[0] for x in rows_old}]
        o, n = dict(rows_old), dict(rows_new)
        for name in names:
            a, b = o.get(name), n.get(name)
            ratio = f"{b / a:.2f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a else "-"
            print(f"{name:52}{fmt(a):>14}{fmt(b):>14}{ratio:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
