#!/usr/bin/env python3
"""The table and the pass/fail line of Scripts/soak (see its header for the definitions).

    python3 Scripts/lib/soak_report.py DIR SECONDS BINARY

Reads DIR/events.log ("EPOCH start|cmd TEXT|fault-begin NAME|fault-end NAME|end alive=0/1|..."),
DIR/status.log ("EPOCH [  3.0s] 1 name STATE [..] 0:00:03.012/0:00:24.000 | 2 ..."), DIR/samples.log
("EPOCH RSS_KB FDS THREADS HTTP", HTTP the fds that are TCP connections to the HLS server; older runs lack it) and DIR/sync/render-times.log (`play --sync-log`): writes the quiet windows to
DIR/quiet-windows.txt and has BINARY (`multiview sync-log-skew`) compare the views' render times in them
(DIR/sync-skew.json). Exit status 0 on pass, 1 on fail.
"""
import json, os, re, subprocess, sys

import soak_schedule

FAULT_RECOVERY = 15.0     # s after a fault ends during which a view may still be recovering
PAUSE_ALLOWANCE = 2.0     # s after the resuming `p` for the views to play again
WHAT_HAPPENED = 15.0      # s after `r N` during which view N is suspended / catching up
REALIGN = 3.0             # s after a group command (seek, +N/-N, rate, p, add) or `subs N` (view N) for the re-align
STATUS_GAP = 3.0          # s without a status line before the process counts as hung
FROZEN_AFTER = 2.0        # not PLAYING for longer than this, outside the windows above = frozen
SKEW_SETTLE = 3.0         # s after any command before a status line counts for the coarse skew
SKEW_GUARD_MS = 100.0     # coarse-skew p99 bound (3 frames at 30 fps; HLS positions step by up to ~50 ms here):
                          # a drift detector, not the sync measure
GROWTH = 0.05             # RSS / fds / threads growth allowed after warm-up
HTTP_PER_HLS_VIEW = 5     # HTTP connections to the HLS server per HLS view: seen at most 3.5 (14 for 4 views). A
                          # ceiling for runaway pools in any run; slow leaks are caught by the cycle peaks
PRECISE_P99_MS = 1.0      # issue 15: recorder skew p99 < 1 ms throughout (every 5 min block)
BLOCK = 300.0             # s per block of the precise skew
STARTUP_LIMIT = 30.0      # s after the start: start-up ends then even when some view never plays (it is frozen then)
STATES = "PLAYING|PAUSED|BUFFERING|STOPPED|FAILED|RETRYING|ENDED|opening"
PART = re.compile(rf"^(\d+) (.*?) ({STATES})\b(.*)$")
WAITING = re.compile(r"^ \[(loading|buffering|seeking|waiting)")
POSITION = re.compile(r"(\d+):(\d\d):(\d\d(?:\.\d+)?)")


def read_events(path):
    events = []
    for line in open(path, encoding="utf-8", errors="replace"):
        stamp, _, rest = line.rstrip("\n").partition(" ")
        kind, _, text = rest.partition(" ")
        events.append((float(stamp), kind, text))
    return events


def read_samples(path):
    """[(epoch, RSS kB, fds, threads, HTTP connections or None)]: runs before the fifth column have None."""
    samples = []
    for line in open(path):
        values = [float(x) for x in line.split()]
        if values:
            samples.append(tuple(values[:4]) + (values[4] if len(values) > 4 else None,))
    return samples


def hls_views(events):
    """The HLS views the start event names (hls=N), None for runs that did not name them."""
    for _, kind, text in events:
        if kind == "start":
            found = re.search(r"\bhls=(\d+)", text)
            return int(found.group(1)) if found else None
    return None


def read_status(path):
    """[(epoch, {view: (state, position or None, text)})] for every status line."""
    lines = []
    for line in open(path, encoding="utf-8", errors="replace"):
        stamp, _, rest = line.rstrip("\n").partition(" ")
        m = re.match(r"^\[\s*[0-9.]+s\] (.*)$", rest)
        if not m:
            continue
        views = {}
        for part in m.group(1).split(" | "):
            p = PART.match(part.strip())
            if not p:
                continue
            pos = POSITION.search(p.group(4))
            seconds = int(pos.group(1)) * 3600 + int(pos.group(2)) * 60 + float(pos.group(3)) if pos else None
            state = p.group(3)
            if state == "PLAYING" and WAITING.match(p.group(4)):
                state = "WAITING"          # PLAYING but "[waiting …]": asked to play, not playing
            elif state == "PLAYING" and seconds is None:
                state = "NO-POSITION"      # says PLAYING but reports no position: not seen playing
            views[int(p.group(1))] = (state, seconds, part.strip())
        lines.append((float(stamp), views))
    # PLAYING with the position not moving for a second or more (a stuck sink that still says PLAYING): STUCK.
    last = {}
    for t, views in lines:
        for v, (state, pos, text) in list(views.items()):
            before = last.get(v)
            if state == "PLAYING" and pos is not None and before and t - before[0] >= 0.9 and pos == before[1]:
                views[v] = ("STUCK", pos, text + " (position not moving)")
            if pos is not None and (before is None or pos != before[1]):
                last[v] = (t, pos)
    return lines


def is_group_command(text):
    word = text.split()[0]
    return word in ("seek", "rate", "p", "add") or word[0] in "+-"


def realign_seconds(events, status):
    """For each group command: seconds until the first status line with every view PLAYING, when that came
    before the next command or fault (else the command is left out)."""
    marks = [(t, kind, text) for t, kind, text in events if kind in ("cmd", "fault-begin", "fault-end")]
    out = []
    for i, (t, kind, text) in enumerate(marks):
        if kind != "cmd" or not is_group_command(text) or text == "p":
            continue
        until = marks[i + 1][0] if i + 1 < len(marks) else float("inf")
        ready = next((s for s, views in status if t < s < until and views
                      and all(st == "PLAYING" for st, _, _ in views.values())), None)
        if ready is not None:
            out.append(ready - t)
    return out


def windows(events, status):
    """Allowed windows: [(start, end, view or None for all, why)]. Start-up: from the start to the first status
    line with every view PLAYING, + REALIGN for them to settle; at most STARTUP_LIMIT after the start event (a view
    that never plays must not stretch start-up over the whole run: then nothing at all would count as frozen)."""
    ready = next((t for t, views in status if views and all(s == "PLAYING" for s, _, _ in views.values())),
                 float("inf"))
    began = next((t for t, kind, _ in events if kind == "start"), None)
    if began is not None:
        ready = min(ready, began + STARTUP_LIMIT)
    # from before the start event: the player prints its first lines while the script is still noting its pid
    out, paused_at, fault_at = [(float("-inf"), ready + REALIGN, None, "start-up")], None, {}
    for t, kind, text in events:
        if kind == "fault-begin":
            fault_at[text] = t
        elif kind == "fault-end" and text in fault_at:
            out.append((fault_at.pop(text), t + FAULT_RECOVERY, None, f"fault {text}"))
        elif kind == "cmd" and text == "p":
            if paused_at is None:
                paused_at = t
            else:
                out.append((paused_at, t + PAUSE_ALLOWANCE, None, "paused"))
                paused_at = None
        elif kind == "cmd" and text.startswith("r "):
            out.append((t, t + WHAT_HAPPENED, int(text.split()[1]), text))
        if kind == "cmd" and is_group_command(text):
            out.append((t, t + REALIGN, None, "re-align"))
        elif kind == "cmd" and text.startswith("subs "):
            out.append((t, t + REALIGN, int(text.split()[1]), "re-align"))
    for name, t in fault_at.items():      # a fault whose end never came: to the end of the run
        out.append((t, float("inf"), None, f"fault {name}"))
    if paused_at is not None:
        out.append((paused_at, float("inf"), None, "paused"))
    return out


def outside(start, end, view, wins):
    """Seconds of [start, end] not covered by a window that applies to `view`."""
    spans = sorted((max(s, start), min(e, end)) for s, e, v, _ in wins if (v is None or v == view) and s < end and e > start)
    covered, cursor = 0.0, start
    for s, e in spans:
        s = max(s, cursor)
        if e > s:
            covered += e - s
            cursor = e
    return (end - start) - covered


def frozen_episodes(status, wins, run_end, death=None, planned_end=None):
    """[(view, frozen_from, end, first text seen)] for every not-PLAYING stretch longer than FROZEN_AFTER outside
    the windows (counted from the view's first PLAYING; a view that never plays is frozen from its first line; a
    view missing from a status line is not playing). `death`: when the player process ended early (its last status
    line) — every view is frozen from then to `planned_end`, whatever window is open (a fault that killed the player
    never ends its window)."""
    episodes, seen_playing, since, text_at, first_line = [], set(), {}, {}, {}
    all_views = sorted({v for _, views in status for v in views})
    for t, views in status:
        for v in all_views:
            first_line.setdefault(v, t) if v in views else None
            state = views.get(v, ("missing", None, "missing"))[0]
            if state == "PLAYING":
                seen_playing.add(v)
                if v in since:
                    episodes.append((v, since.pop(v), t, text_at.pop(v)))
            elif v in seen_playing and v not in since:
                since[v] = t
                text_at[v] = views.get(v, (None, None, "missing from the status line"))[2]
    until = run_end if death is None else min(run_end, death)
    open_at_end = [(v, s, until, text_at[v]) for v, s in since.items()]
    open_at_end += [(v, first_line[v], until, "never PLAYING") for v in all_views
                    if v not in seen_playing and v in first_line]
    judged = [(episode, crossed(*episode[:3], wins)) for episode in episodes + open_at_end]
    out = [(v, t, e, text) for (v, s, e, text), t in judged if t is not None]
    if death is not None:
        # Every view frozen from the death to the planned end; one already frozen then, from when it froze (one
        # episode). View 0: it died before any status line named a view.
        frozen_at_death = {episode[0]: t for episode, t in judged if episode in open_at_end and t is not None}
        out = [episode for episode in out if episode[0] not in frozen_at_death or episode[2] != until]
        out += [(v, frozen_at_death.get(v, death), max(death, planned_end or run_end), DEAD) for v in all_views or [0]]
    return out


def crossed(view, start, end, wins):
    """The instant a not-PLAYING stretch's time outside the windows passed FROZEN_AFTER (0.25 s steps), or None."""
    if outside(start, end, view, wins) <= FROZEN_AFTER:
        return None
    t = start
    while t < end and outside(start, t, view, wins) <= FROZEN_AFTER:
        t += 0.25
    return min(t, end)


DEAD = "the player process had exited"


def player_death(events, status, start):
    """When the player ended before the run did (the soak wrote `player-exited` or `end alive=0`): the time of its
    last status line (the start when it printed none); None while it lived to the end."""
    if not any(kind == "player-exited" or (kind == "end" and text == "alive=0") for _, kind, text in events):
        return None
    return max((t for t, _ in status), default=start)


CRASH = re.compile(r"Fatal error|Program crashed|assertion|ERROR:|CRITICAL|Segmentation|Aborted|Bad pointer")


def last_words(folder):
    """What the player said as it ended: the first crash line among its last 1000 stderr lines (a backtrace follows
    it), else its last line (without the soak's time stamp); None without any."""
    try:
        lines = [line.rstrip("\n").partition(" ")[2] for line in open(f"{folder}/stderr.log", encoding="utf-8",
                                                                        errors="replace")]
    except OSError:
        return None
    lines = [line for line in lines if line.strip()][-1000:]
    crash = next((line for line in lines if CRASH.search(line)), None)
    return (crash or lines[-1])[:200] if lines else None


def coarse_skew_ms(views, exclude):
    positions = [pos for v, (state, pos, _) in views.items() if state == "PLAYING" and pos is not None and v not in exclude]
    return (max(positions) - min(positions)) * 1000 if len(positions) >= 2 else None


def quiet_windows(wins, commands, run_end):
    """The spans in which the precise skew compares views: [(start, end, {views left out})]. Not inside any
    window that applies to every view (start-up, faults + recovery, pauses, re-aligns) nor within SKEW_SETTLE of
    any command or fault event (the same rule as the coarse skew); a view is left out while a window of its own
    is open (`r N`, `subs N`)."""
    blocked = sorted([(s, e) for s, e, v, _ in wins if v is None] + [(c, c + SKEW_SETTLE) for c in commands])
    quiet, cursor = [], max((e for s, e, v, why in wins if why == "start-up"), default=float("-inf"))
    for s, e in blocked:
        if s > cursor and cursor < run_end:
            quiet.append((cursor, min(s, run_end)))
        cursor = max(cursor, e)
    if cursor < run_end:
        quiet.append((cursor, run_end))
    own = [(s, e, v) for s, e, v, _ in wins if v is not None]
    out = []
    for qs, qe in quiet:
        cuts = sorted({qs, qe} | {t for s, e, _ in own for t in (s, e) if qs < t < qe})
        for a, b in zip(cuts, cuts[1:]):
            out.append((a, b, {v for s, e, v in own if s < b and e > a}))
    return out


def precise_skew(folder, binary, windows, start, run_end):
    """Runs `multiview sync-log-skew` over DIR/sync with the quiet windows: (its JSON, None) or (None, why not)."""
    log = f"{folder}/sync/render-times.log"
    if not os.path.exists(log):
        return None, f"no {log}: the player wrote no render-time log (--sync-log)"
    with open(f"{folder}/quiet-windows.txt", "w") as out:
        out.write("# START END [VIEWS LEFT OUT] (wall clock), from soak_report.py\n")
        for a, b, views in windows:
            out.write(f"{a:.6f} {b:.6f} {','.join(str(v) for v in sorted(views))}".rstrip() + "\n")
    run = subprocess.run([binary, "sync-log-skew", f"{folder}/sync", "--windows", f"{folder}/quiet-windows.txt",
                          "--start", f"{start:.6f}", "--until", f"{run_end:.6f}", "--block", f"{BLOCK:g}",
                          "--json", f"{folder}/sync-skew.json"], capture_output=True, text=True)
    if run.returncode != 0:
        return None, f"sync-log-skew failed ({run.returncode}): {(run.stderr or run.stdout).strip()[:300]}"
    with open(f"{folder}/sync-skew.json") as f:
        return json.load(f), None


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))] if values else None


def cycle_peaks(samples, start, warm, run_end, index=1):
    """[(cycle start s, peak of column `index`: 1 RSS, 4 HTTP connections)] for every whole schedule cycle
    (Scripts/lib/soak_schedule.py) that starts after `warm` s and ends by `run_end`, in order."""
    peaks = []
    at = soak_schedule.FIRST
    while at < warm:
        at += soak_schedule.CYCLE
    while start + at + soak_schedule.CYCLE <= run_end:
        inside = [s[index] for s in samples if at <= s[0] - start < at + soak_schedule.CYCLE]
        if inside:
            peaks.append((at, max(inside)))
        at += soak_schedule.CYCLE
    return peaks


def http_verdict(samples, start, warm, run_end, later, views):
    """(name, ok, detail) for the HTTP connections to the HLS server: at most HTTP_PER_HLS_VIEW per HLS view after
    warm-up, and, in runs with two whole schedule cycles after it, the last cycle's peak at most the first's
    + max(2, 5 %) (a leaked connection raises every later peak)."""
    top = max(s[4] for s in later)
    bound = HTTP_PER_HLS_VIEW * views if views else None
    ok = bound is None or top <= bound
    detail = f"max {top:.0f} after warm-up" + (f" (bound {bound}: {HTTP_PER_HLS_VIEW} per HLS view x {views})"
                                              if bound else " (no HLS view count in the start event: no bound)")
    peaks = cycle_peaks(samples, start, warm, run_end, index=4)
    if len(peaks) >= 2:
        first, last = peaks[0][1], peaks[-1][1]
        ok = ok and last <= first + max(2, GROWTH * first)
        detail += f"; cycle peaks {first:.0f} -> {last:.0f} ({peaks[0][0]:.0f} s vs {peaks[-1][0]:.0f} s)"
    return "HLS server's HTTP connections bounded, not growing", ok, detail


def judge(folder, total, measure_skew):
    """Prints the table and the verdicts of the soak in `folder` (a run of `total` s); True when it passed.
    `measure_skew(quiet windows, start, until)` gives the precise skew: (its JSON, None) or (None, why not)."""
    events = read_events(f"{folder}/events.log")
    status = read_status(f"{folder}/status.log")
    samples = read_samples(f"{folder}/samples.log")
    has_http = all(s[4] is not None for s in samples)
    start = next(t for t, kind, _ in events if kind == "start")
    run_end = next((t for t, kind, _ in events if kind == "end"), status[-1][0] if status else start)
    alive = any(kind == "end" and text == "alive=1" for _, kind, text in events)
    death = player_death(events, status, start)
    wins = windows(events, status)
    frozen = frozen_episodes(status, wins, run_end, death, start + total)
    commands = [t for t, kind, _ in events if kind in ("cmd", "fault-begin", "fault-end")]

    def in_window(t, view=None):
        return any(s <= t <= e and (v is None or v == view) for s, e, v, _ in wins)

    skews = {}
    for t, views in status:
        if t > run_end or any(0 <= t - c <= SKEW_SETTLE for c in commands) or in_window(t):
            continue
        if any(state != "PLAYING" for state, _, _ in views.values()):
            continue
        exclude = {v for s, e, v, _ in wins if v is not None and s <= t <= e}
        skew = coarse_skew_ms(views, exclude)
        if skew is not None:
            skews[t] = skew

    print(f"{'time':>6} {'RSS MB':>7} {'fds':>5} {'http':>4} {'threads':>7} {'PLAYING':>8} {'frozen':>6} {'skew ms':>8}  window")
    for t, rss, fds, threads, http in samples:
        if t > run_end:
            break
        line = max((s for s in status if s[0] <= t), default=None, key=lambda s: s[0])
        playing = f"{sum(1 for st, _, _ in line[1].values() if st == 'PLAYING')}/{len(line[1])}" if line else "-"
        n_frozen = len({v for v, s, e, _ in frozen if s <= t <= e})
        near = [k for k in skews if abs(k - t) <= 2.5]
        skew = f"{skews[min(near, key=lambda k: abs(k - t))]:.1f}" if near else "-"
        open_windows = ",".join(sorted({why for s, e, v, why in wins if s <= t <= e}))
        http_text = f"{http:.0f}" if http is not None else "-"
        print(f"{t - start:6.0f} {rss / 1024:7.1f} {fds:5.0f} {http_text:>4} {threads:7.0f} {playing:>8} {n_frozen:6d} "
              f"{skew:>8}  {open_windows}")

    print()
    realign = realign_seconds(events, status)
    if realign:
        print(f"command -> every view PLAYING (status lines, 1 s steps; {len(realign)} group commands): "
              f"p50 {percentile(realign, 50):.1f} s, max {max(realign):.1f} s (allowed without counting: "
              f"{REALIGN:g} s + {FROZEN_AFTER:g} s)")
    verdicts = []
    for v, s, e, text in frozen:
        if text != DEAD:
            print(f"frozen: view {v} from {s - start:.1f} s to {e - start:.1f} s (not PLAYING > {FROZEN_AFTER:g} s "
                  f"outside the allowed windows); status then: {text[:160]}")
    dead_views = [v for v, _, _, text in frozen if text == DEAD]
    if death is not None:
        during = ",".join(sorted({why for s, e, v, why in wins if s <= death <= e})) or "no window"
        said = last_words(folder)
        print(f"frozen: views {','.join(str(v) for v in dead_views if v) or '(none listed yet)'} from {death - start:.1f} s to "
              f"{total:.0f} s: the player process exited (its last status line at {death - start:.1f} s, during "
              f"{during}); its stderr at the end: {said or '(nothing)'}")
    verdicts.append(("0 frozen views", not frozen,
                     f"{len(frozen)} frozen episode(s)" + (f", {len(dead_views)} of them the player's death" if dead_views else "")))
    verdicts.append(("player alive at the end", alive, "alive" if alive else
                     f"exited at {death - start:.1f} s (its last status line; see stderr.log)" if death is not None
                     else "no end recorded (see events.log, stderr.log)"))
    # The status line comes once a second whatever the views do (README): a longer silence is a hung process.
    stamps = [t for t, _ in status if t <= run_end] + [run_end]
    gaps = [(b - a, a) for a, b in zip(stamps, stamps[1:])]
    gap, gap_at = max(gaps) if gaps else (float("inf"), start)
    verdicts.append((f"a status line at least every {STATUS_GAP:g} s", gap <= STATUS_GAP,
                     f"longest silence {gap:.1f} s from {gap_at - start:.0f} s"))
    quit_text = next((text for _, kind, text in events if kind == "exit-after-q"), "none (not recorded)")
    try:
        quit_ok, quit_detail = float(quit_text) <= 2.0, f"exited {float(quit_text):.2f} s after q"
    except ValueError:
        quit_ok, quit_detail = False, quit_text
    verdicts.append(("q ends the process within 2 s", quit_ok, quit_detail))

    # Blocks up to the run's end (not one more starting at it: a 10 min run has two 5 min blocks).
    # Blocks up to the planned end, not the run's: a player that died leaves its later blocks empty, and they fail.
    precise, why_not = measure_skew(quiet_windows(wins, commands, run_end), start, start + total - 0.001)
    print()
    if precise:
        fmt = lambda v: f"{v:.3f}" if v is not None else "-"
        print(f"precise skew (play --sync-log: every frame's render time, views of the group compared in the quiet "
              f"windows; {precise['frames_in_windows']} of {precise['frames_logged']} frames inside them)")
        print(f"{'block':>5} {'from s':>6} {'views':>5} {'frames':>7} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}")
        for b in precise["blocks"]:
            print(f"{b['block']:5d} {b['from_s']:6.0f} {b['views']:5d} {b['frames']:7d} {fmt(b['p50_ms']):>7} "
                  f"{fmt(b['p99_ms']):>7} {fmt(b['max_ms']):>7}")
        o = precise["overall"]
        print(f"{'all':>5} {'':>6} {'':>5} {o['frames']:7d} {fmt(o['p50_ms']):>7} {fmt(o['p99_ms']):>7} {fmt(o['max_ms']):>7}")
        bad = [b for b in precise["blocks"] if b["frames"] == 0 or b["p99_ms"] >= PRECISE_P99_MS]
        detail = (f"p99 per block {', '.join(fmt(b['p99_ms']) for b in precise['blocks'])} ms; overall {fmt(o['p99_ms'])} ms"
                  + ("".join(f"; block {b['block']}: no frame compared" for b in precise["blocks"] if b["frames"] == 0)))
        verdicts.append((f"skew p99 < {PRECISE_P99_MS:g} ms in every {BLOCK / 60:g} min block (recorder)",
                         bool(not bad and precise["blocks"] and o["p99_ms"] is not None and o["p99_ms"] < PRECISE_P99_MS),
                         detail))
    else:
        print(f"precise skew: {why_not}")
        verdicts.append((f"skew p99 < {PRECISE_P99_MS:g} ms in every {BLOCK / 60:g} min block (recorder)", False, why_not))

    values = list(skews.values())
    p99 = percentile(values, 99)
    if values:
        print(f"coarse skew (status-line positions, {len(values)} lines): p50 {percentile(values, 50):.1f} ms, "
              f"p99 {p99:.1f} ms, max {max(values):.1f} ms — a drift guard; the sync measure is the precise skew above")
    verdicts.append((f"coarse skew p99 < {SKEW_GUARD_MS:g} ms (drift guard)", p99 is not None and p99 < SKEW_GUARD_MS,
                     f"p99 {p99:.1f} ms" if p99 is not None else "no status line with every view PLAYING"))

    if total >= 600:
        warm, compared_from, how = 300.0, 300.0, "after the first 5 min vs the first sample after 5 min"
    else:
        warm, compared_from = 60.0, total / 2
        how = (f"run shorter than 10 min: second half (from {compared_from:.0f} s) vs the first sample after a "
               f"{warm:.0f} s warm-up")
    base = next((s for s in samples if s[0] - start >= warm), None)
    later = [s for s in samples if s[0] - start >= compared_from and s[0] <= run_end and s is not base]
    quiet = [s for s in later if not in_window(s[0])] or later
    if base and later:
        rss_growth = max(s[1] for s in later) / base[1] - 1
        detail = f"{base[1] / 1024:.1f} -> max {max(s[1] for s in later) / 1024:.1f} MB ({rss_growth:+.1%})"
        peaks = cycle_peaks(samples, start, warm, run_end)
        if len(peaks) >= 2:
            # The schedule repeats every cycle and RSS swings with it (30 MB in a 30 min run: views reloaded, the
            # HLS outage's rebuilds): a first sample taken in a trough against the run's top measured that swing,
            # not growth. A leak raises each cycle's peak: the last full cycle's against the first's.
            (first_from, first_peak), (last_from, last_peak) = peaks[0], peaks[-1]
            cycle = soak_schedule.CYCLE
            how = (f"peak of the last full {cycle:g} s schedule cycle ({last_from:.0f}-{last_from + cycle:.0f} s) vs "
                   f"the first after 5 min ({first_from:.0f}-{first_from + cycle:.0f} s)")
            detail = (f"{first_peak / 1024:.1f} -> {last_peak / 1024:.1f} MB ({last_peak / first_peak - 1:+.1%}); "
                      f"first sample after 5 min vs the run's max: {detail}, the cycle's swing")
            rss_growth = last_peak / first_peak - 1
        verdicts.append((f"RSS growth < {GROWTH:.0%} ({how})", rss_growth < GROWTH, detail))
        # The HTTP connections to the HLS server are a keep-alive pool (its size follows the downloads in flight and
        # it empties when a view is rebuilt: 7-14 for 4 HLS views in one cycle): they are judged apart, and the
        # process's own descriptors (files, pipes, eventfds, PulseAudio sockets) must stay flat without them.
        def own_fds(s):
            return s[2] - s[4] if has_http else s[2]

        for name, value in (("fds" + (" without the HLS server's HTTP connections" if has_http else ""), own_fds),
                            ("threads", lambda s: s[3])):
            top = max(value(s) for s in quiet)
            allowed = value(base) + max(2, GROWTH * value(base))
            verdicts.append((f"{name} flat (outside fault windows, <= base + max(2, {GROWTH:.0%}))", top <= allowed,
                             f"{value(base):.0f} -> max {top:.0f}, last {value(quiet[-1]):.0f}"))
        if has_http:
            verdicts.append(http_verdict(samples, start, warm, run_end, later, hls_views(events)))
    else:
        verdicts.append(("RSS/fds/threads sampled after warm-up", False, "too few samples"))

    for name, ok, detail in verdicts:
        print(f"  {'ok  ' if ok else 'FAIL'} {name}: {detail}")
    passed = all(ok for _, ok, _ in verdicts)
    failed = [name for name, ok, _ in verdicts if not ok]
    print(f"soak {total / 60:g} min: {'PASS' if passed else 'FAIL (' + '; '.join(failed) + ')'}")
    return passed


def main():
    folder, total, binary = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    passed = judge(folder, total, lambda wins, start, until: precise_skew(folder, binary, wins, start, until))
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
