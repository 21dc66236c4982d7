"""The figures and printed tables of Scripts/bench-network (bench_network.py runs the rows; this module reads what
they recorded and prints the report). Standard library only."""


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(0, min(len(ordered) - 1, int(round(q / 100.0 * (len(ordered) - 1)))))
    return ordered[rank]


def read_clock_log(path):
    """`join --clock-log`: sorted (monotonic_ns, netclock − monotonic ns) samples."""
    samples = []
    for line in open(path):
        parts = line.strip().split(",")
        if len(parts) == 2:
            mono, clock = int(parts[0]), int(parts[1])
            samples.append((mono, clock - mono))
    return samples


def error_at(samples, at):
    """The clock error (ns) sampled nearest to monotonic instant `at`; None when no sample is within 100 ms."""
    if not samples:
        return None
    lo, hi = 0, len(samples) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if samples[mid][0] < at:
            lo = mid + 1
        else:
            hi = mid
    best = min((samples[i] for i in (lo - 1, lo) if 0 <= i < len(samples)), key=lambda s: abs(s[0] - at))
    return best[1] if abs(best[0] - at) < 100_000_000 else None


def summary(values):
    return {"n": len(values), "p50": percentile(values, 50), "p99": percentile(values, 99),
            "max": max(values) if values else None}


def fmt(s, key="p50"):
    return "-" if not s or s.get(key) is None else f"{s[key]:.3f}"


def link(row):
    return "relayed" if row.get("relayed", True) else "loopback"


def bin_label(b):
    return f"{b['from_ms']}–{b['to_ms'] if b['to_ms'] is not None else ''}"


def bin_cell(b):
    return "-" if b["n"] == 0 else f"{b['mean_abs_ms']:.2f} / {b['p90_abs_ms']:.2f} ({b['n']})"


def print_report(delay_ms, jitter_ms, clock_probe_s, clock_rows, rows):
    """The clock-tuning table, the rows table and the coordinated rows against their members' clock errors."""
    if clock_rows:
        print(f"\nNetClientClock true error |reading − CLOCK_MONOTONIC| (ms), {clock_probe_s} s after sync; relayed: one"
              f" member behind its relay ({delay_ms:g} ± {jitter_ms:g} ms), loopback: on 127.0.0.1, no relay; probes of"
              f" one batch run side by side")
        print(f"{'setting':<34}{'link':>9}{'sync':>6}{'settled':>8} {'exch/s':>6} {'cpu ms/s':>8}  {'from 0.4 s p50':>14}"
              f" {'p99':>6}  {'after 2 s p50':>13} {'p99':>6} {'max':>6} {'mean':>7} {'limit':>6}")
        for r in clock_rows:
            e, j = r["error_after_2s_ms"], r.get("error_from_0_4s_ms")
            settled = "-" if r.get("settled_ms") is None else f"{r['settled_ms']:.0f}"
            cpu = "-" if r.get("cpu_ms_per_s") is None else f"{r['cpu_ms_per_s']:.1f}"
            print(f"{r['setting']:<34}{link(r):>9}{r['sync_ms']:>6.0f}"
                  f"{settled:>8} {r.get('exchanges_per_s', 0):>6.0f} {cpu:>8}  {fmt(j):>14} {fmt(j, 'p99'):>6}  "
                  f"{fmt(e):>13} {fmt(e, 'p99'):>6} {fmt(e, 'max'):>6} {r.get('mean_error_after_2s_ms', 0):>7.3f}"
                  f" {'-' if r.get('adaptive_limit_ms') is None else format(r['adaptive_limit_ms'], '.1f'):>6}")
        print("sync = probe start → synchronised; settled = ms after sync (a member's NetClockSettling, 8 × 1 ms);"
              " exch/s = exchanges GStreamer accepted per second; cpu = the probe process's CPU time per second; mean = the"
              " signed mean error after 2 s (a constant path asymmetry shows there); limit = the adaptive round-trip limit at"
              " the end (RoundTripLimitPolicy; - = fixed)")
        binned = [r for r in clock_rows if r.get("offset_error_by_rtt")]
        if binned:
            print("\nEach accepted exchange's own offset error (|remote − local|, ms: mean / p90 (n)) by its round trip"
                  " − the shortest seen (ms)")
            print(f"{'setting':<34}{'link':>9}" + "".join(f"{bin_label(b):>20}" for b in binned[0]["offset_error_by_rtt"]))
            for r in binned:
                print(f"{r['setting']:<34}{link(r):>9}" + "".join(f"{bin_cell(b):>20}" for b in r["offset_error_by_rtt"]))
    if not rows:
        return
    print(f"\nNetwork sync, members in namespaces, {delay_ms:g} ± {jitter_ms:g} ms relayed each way "
          f"(ms; audible = click onsets on the members' channels, video = render instants on CLOCK_MONOTONIC)")
    print(f"{'row':<15}{'n':>3} {'audible p50':>11} {'p99':>7} {'max':>7} {'clicks':>6}  {'video p50':>9} {'p99':>7}"
          f" {'max':>7}  {'after seek: audible p99':>23} {'video p99':>9}  {'seek→al':>8} {'sync p50':>8} {'rtt':>6}"
          f" {'join max':>8} {'load':>5}")
    for r in rows:
        if "not_run" in r:
            print(f"{r['side']:<15}{r['members']:>3}  not run: {r['not_run']}")
            continue
        a, v = r["audible_ms"], r["video_ms"]
        seek = "-" if r["seek_to_aligned_ms"] is None else f"{r['seek_to_aligned_ms']:.0f}"
        print(f"{r['side']:<15}{r['members']:>3} {fmt(a):>11} {fmt(a, 'p99'):>7} {fmt(a, 'max'):>7} {a['n']:>6}  "
              f"{fmt(v):>9} {fmt(v, 'p99'):>7} {fmt(v, 'max'):>7}  {fmt(r['audible_after_seek_ms'], 'p99'):>23} "
              f"{fmt(r['video_after_seek_ms'], 'p99'):>9}  {seek:>8} "
              f"{fmt(r['clock_sync_ms']) if r['clock_sync_ms'] else '-':>8} "
              f"{fmt(r['rtt_average_ms']) if r['rtt_average_ms'] else '-':>6} "
              f"{fmt(r['join_to_first_frame_ms'], 'max') if r.get('join_to_first_frame_ms') else '-':>8} "
              f"{r['load_after'][0]:>5.1f}")
    print("seek→al = seek instant → the last member's first frame after it; sync = member start → net clock synced;"
          " join max = member launch → its first frame (coordinated). raw/uncoordinated video on CLOCK_MONOTONIC,"
          " coordinated video on each member's net clock (its render log)")
    print("load = the 1-minute load average at the row's end (2 cores; the machine is shared)")
    print("goals: audible and video p99 < 1 ms across hosts; join → aligned < 1.5 s; 8 members × one view: p99 < 2 ms")
    split = [r for r in rows if r.get("clock_ms")]
    if split:
        print("\nCoordinated rows against the members' true clock errors (ms; each member's net clock reading −"
              " CLOCK_MONOTONIC, `join --clock-log`): clock = the spread those errors alone would put between the"
              " members' clicks at each click; video true = render instants corrected by each member's error (on"
              " CLOCK_MONOTONIC, like the raw and uncoordinated rows)")
        print(f"{'row':<15}{'n':>3} {'audible p50':>11} {'p99':>7} {'clock p50':>9} {'p99':>7} {'max':>7}"
              f"  {'video p50':>9} {'p99':>7}  {'video true p50':>14} {'p99':>7}")
        for r in split:
            a, c, v, t = r["audible_ms"], r["clock_ms"], r["video_ms"], r.get("video_true_ms")
            print(f"{r['side']:<15}{r['members']:>3} {fmt(a):>11} {fmt(a, 'p99'):>7} {fmt(c):>9} {fmt(c, 'p99'):>7}"
                  f" {fmt(c, 'max'):>7}  {fmt(v):>9} {fmt(v, 'p99'):>7}  {fmt(t):>14} {fmt(t, 'p99'):>7}")
