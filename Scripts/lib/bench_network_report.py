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


def print_report(delay_ms, jitter_ms, clock_probe_s, clock_rows, rows):
    """The clock-tuning table, the rows table and the coordinated rows against their members' clock errors."""
    if clock_rows:
        print(f"\nNetClientClock true error (reading − CLOCK_MONOTONIC), one member behind the relay, {clock_probe_s} s "
              f"after sync (ms)")
        print(f"{'setting':<34}{'sync':>7} {'first 2 s max':>13} {'after 2 s p50':>13} {'p99':>7} {'max':>7} {'>1 ms until':>11}")
        for r in clock_rows:
            e = r["error_after_2s_ms"]
            print(f"{r['setting']:<34}{r['sync_ms']:>7.0f} {r['error_first_2s_max_ms']:>13.3f} {fmt(e):>13} "
                  f"{fmt(e, 'p99'):>7} {fmt(e, 'max'):>7} {r['last_error_over_1ms_at_ms'] / 1000:>10.1f}s")
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
