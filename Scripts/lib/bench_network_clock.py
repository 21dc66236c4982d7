"""Scripts/bench-network's clock section: the NetClientClock tunings compared (name → `netclock-baseline probe`
flags) and what one probe's output says. Standard library only."""
from bench_network_report import percentile, summary

CLOCK_PROBE_S = 15
# Batches of at most 4 (one namespace each), run side by side over identical relays: name → netclock-baseline flags.
# Every batch runs the previous and the chosen tuning (NetClockTuning.previous / .standard) beside its candidates.
PREVIOUS = ("previous (200 ms, 20, 20, 128)", ["--tuning", "previous"])
CHOSEN = ("chosen (adaptive, 5, 5, 1024)", ["--tuning", "standard"])
CLOCK_SETTINGS = [
    [PREVIOUS, CHOSEN,
     ("chosen, fixed limit 200 ms", ["--adapt-limit", "no"]),
     ("chosen, poll 10 ms", ["--minimum-update-interval", "10", "--poll-interval", "10"])],
    [PREVIOUS, CHOSEN,
     ("gstreamer defaults (1 s, 50, 100, 32)", ["--tuning", "gstreamer"]),
     ("chosen + limit min+5 after 200", ["--limit-after", "200", "--limit-margin", "5"])],
]
# The same side by side with no relay: members on 127.0.0.1 (loopback, the provider in the same namespace).
LOOPBACK_SETTINGS = [[PREVIOUS, CHOSEN]]
# Round trip − the shortest seen (ms): the bins of the exchanges' offset errors (does a short round trip mean a
# small asymmetry?).
RTT_BINS_MS = [0, 2, 5, 10, 15, 20]


def rtt_bins(exchanges):
    """Exchanges (t ms, rtt ms, own offset error ms) binned by round trip − the shortest: per bin the count and the
    mean and p90 of |offset error| (its truth is 0: one kernel clock on both ends)."""
    if not exchanges:
        return []
    shortest = min(rtt for _, rtt, _ in exchanges)
    bins = []
    for lo, hi in zip(RTT_BINS_MS, RTT_BINS_MS[1:] + [float("inf")]):
        errors = [abs(e) for _, rtt, e in exchanges if lo <= rtt - shortest < hi]
        bins.append({"from_ms": lo, "to_ms": hi if hi != float("inf") else None, "n": len(errors),
                     "mean_abs_ms": sum(errors) / len(errors) if errors else None,
                     "p90_abs_ms": percentile(errors, 90) if errors else None})
    return bins



def probe_row(name, flags, relayed, out, seconds):
    """One `netclock-baseline probe` run's figures: true error, settling, exchanges by round trip, CPU, limit."""
    lines = out.splitlines()
    sync_ms = float(lines[0].split()[1])
    samples = [(float(l.split()[1]), float(l.split()[2]) / 1000) for l in lines if l.startswith("error ")]
    late = [abs(e) for t, e in samples if t >= 2000]
    early = [abs(e) for t, e in samples if t < 2000]
    settle = max([t for t, e in samples if abs(e) >= 1.0], default=0.0)
    settled = [float(l.split()[1]) for l in lines if l.startswith("settled ")]
    # From 0.4 s after sync on: what a member joining once its clock settled (0.3-0.4 s) plays on.
    joined = [abs(e) for t, e in samples if t >= 400]
    exchanges = [(float(l.split()[1]), float(l.split()[2]) / 1000, float(l.split()[3]) / 1000)
                 for l in lines if l.startswith("exchange ") and l.split()[3] != "nan"]
    cpu = [float(l.split()[1]) for l in lines if l.startswith("cpu ")]
    limit = [float(l.split()[1]) for l in lines if l.startswith("limit ")]
    return {"setting": name, "flags": flags, "relayed": relayed, "sync_ms": sync_ms,
                 "error_after_2s_ms": summary(late), "error_from_0_4s_ms": summary(joined),
                 "error_first_2s_max_ms": max(early) if early else None, "last_error_over_1ms_at_ms": settle,
                 "settled_ms": settled[0] if settled else None,
                 "exchanges_per_s": len([x for x in exchanges if x[0] >= 0]) / seconds,
                 "mean_error_after_2s_ms": sum(e for t, e in samples if t >= 2000) / max(1, len(late)),
                 "offset_error_by_rtt": rtt_bins(exchanges),
                 "cpu_ms_per_s": cpu[0] / seconds if cpu else None,
                 "adaptive_limit_ms": limit[0] if limit else None}
