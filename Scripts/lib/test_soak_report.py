#!/usr/bin/env python3
"""Tests of the soak's verdict (soak_report.py) on small synthetic runs: no player, no daemon, milliseconds.

    python3 Scripts/lib/test_soak_report.py        # also run by the suite (MultiviewCLITests.SoakReportScriptTests)

Each test writes the logs Scripts/soak would (events.log, status.log, samples.log, stderr.log) for a short run of
three views in which one thing goes wrong, and checks that the report counts it as frozen, says so in a line, and
fails the run. The precise skew (`multiview sync-log-skew` over the render-time log) is handed in as a measured
result: these tests are about the frozen count, not the skew.
"""
import contextlib, io, os, shutil, sys, tempfile, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak_report  # noqa: E402
import soak_schedule  # noqa: E402

T0 = 1_700_000_000.0   # the run's start (epoch seconds)
LENGTH = 120           # seconds of run


def playing(t):
    """A playing view's status entry at `t` s: its position moves with the run."""
    return f"PLAYING 0:00:{2 + t % 20:06.3f}/0:00:24.000"


class Run:
    """The logs of one synthetic soak run in a temporary folder."""

    def __init__(self, folder, length=LENGTH):
        self.folder = folder
        self.length = length
        self.events = [(0.0, "start pid=1 views=3")]

    def event(self, at, text):
        self.events.append((at, text))

    def write(self, entry, until=None, views=(1, 2, 3), alive=True, stderr=(), rss=lambda t: 100000,
              fds=lambda t: 80, http=None):
        """`entry(view, t)`: the view's status entry at second t (state and position), None when it is missing
        from the line. Status lines every second until `until` (the run's length); samples every 5 s (`rss(t)`:
        RSS in kB, `fds(t)` open fds, `http(t)` of those the HLS server's connections: no column when None); the
        end as the soak writes it."""
        until = self.length if until is None else until
        with open(f"{self.folder}/status.log", "w") as out:
            for t in range(0, until + 1):
                parts = [f"{v} view{v}.mp4 {text}" for v in views if (text := entry(v, t)) is not None]
                out.write(f"{T0 + t + 0.3:.3f} [{t:6.1f}s] {' | '.join(parts)}\n")
        with open(f"{self.folder}/samples.log", "w") as out:
            for t in range(0, until + 1, 5):
                out.write(f"{T0 + t + 0.1:.3f} {rss(t)} {fds(t)} 100" + (f" {http(t)}" if http else "") + "\n")
        with open(f"{self.folder}/stderr.log", "w") as out:
            for at, line in stderr:
                out.write(f"{T0 + at:.3f} {line}\n")
        if alive:
            self.event(self.length, "end alive=1")
            self.event(self.length + 0.1, "exit-after-q 0.08")
        with open(f"{self.folder}/events.log", "w") as out:
            for at, text in sorted(self.events):
                out.write(f"{T0 + at:.6f} {text}\n")

    def judge(self):
        """(passed, the report's text, the span the precise skew was asked for)."""
        asked = []

        def measure(windows, start, until):
            asked.append((start, until))
            blocks = [{"block": 0, "from_s": 0, "views": 3, "frames": 900, "p50_ms": 0.2, "p99_ms": 0.5, "max_ms": 0.7}]
            return {"frames_in_windows": 900, "frames_logged": 1000, "blocks": blocks,
                    "overall": {"frames": 900, "p50_ms": 0.2, "p99_ms": 0.5, "max_ms": 0.7}}, None

        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            passed = soak_report.judge(self.folder, self.length, measure)
        return passed, text.getvalue(), asked


class SoakReportTests(unittest.TestCase):
    def new_run(self, length=LENGTH):
        folder = tempfile.mkdtemp(prefix="soak-report-test.")
        self.addCleanup(shutil.rmtree, folder)
        return Run(folder, length)

    def rss_verdict(self, rss):
        """The RSS line of a 20 min healthy run whose RSS is `rss(t)` kB."""
        passed, text, _ = self.judged(self.new_run(1200), lambda v, t: playing(t), rss=rss)
        return passed, next(line for line in text.splitlines() if "RSS growth" in line)

    def test_rss_swinging_with_the_schedule_cycle_is_not_growth(self):
        # Peaks of 373 MB every cycle, troughs of 348 MB; the first sample after 5 min is in a trough.
        def swing(t):
            return 348_000 + (25_000 if (t - soak_schedule.FIRST) % soak_schedule.CYCLE >= 120 else 0)
        passed, line = self.rss_verdict(swing)
        self.assertTrue(passed, line)
        self.assertIn("ok", line)
        self.assertIn("+0.0%", line)

    def test_rss_whose_cycle_peaks_rise_is_growth(self):
        # The same swing with every peak 6 % above the last: the run's two whole cycles after 5 min differ by 6 %.
        def rising(t):
            cycle = int((t - soak_schedule.FIRST) // soak_schedule.CYCLE)
            peak = (t - soak_schedule.FIRST) % soak_schedule.CYCLE >= 120
            return int((348_000 + (25_000 if peak else 0)) * (1.06 ** cycle if peak else 1))
        passed, line = self.rss_verdict(rising)
        self.assertFalse(passed, line)
        self.assertIn("FAIL", line)

    def fd_verdicts(self, fds, http):
        """The fds and HTTP lines of a 20 min healthy run with 4 HLS views, `fds(t)` open fds of which `http(t)`
        are connections to the HLS server."""
        run = self.new_run(1200)
        run.events[0] = (0.0, "start pid=1 views=3 hls=4")
        passed, text, _ = self.judged(run, lambda v, t: playing(t), fds=fds, http=http)
        lines = [line for line in text.splitlines() if "fds" in line and "flat" in line or "HTTP connections" in line]
        return passed, lines

    @staticmethod
    def pool(t):
        """HLS connections as in the 6 min run on 657e718 (9-10 most of a cycle, 14 after the HLS outage), with 15
        after the outage: total fds 106 -> 112, which the rule that counted them failed (as the 30 min run did)."""
        into = (t - soak_schedule.FIRST) % soak_schedule.CYCLE
        return 15 if 120 <= into < 175 else (10 if into < 60 else 9)

    def test_the_hls_connection_pool_swinging_is_not_an_fd_leak(self):
        # 97 own fds throughout; the pool swings 9-15 (total 106-112 fds, the first sample after 5 min at 106).
        passed, lines = self.fd_verdicts(lambda t: 97 + self.pool(t), self.pool)
        self.assertTrue(passed, lines)
        self.assertEqual(len(lines), 2, lines)
        self.assertTrue(all(line.lstrip().startswith("ok") for line in lines), lines)
        self.assertIn("97 -> max 97", lines[0])
        self.assertIn("cycle peaks 15 -> 15", lines[1])

    def test_own_fds_growing_beside_the_pool_is_a_leak(self):
        # One fd more every minute that is not an HLS connection: +15 over the 15 min after warm-up.
        passed, lines = self.fd_verdicts(lambda t: 97 + t // 60 + self.pool(t), self.pool)
        self.assertFalse(passed, lines)
        self.assertTrue(lines[0].lstrip().startswith("FAIL"), lines)

    def test_hls_connections_rising_every_cycle_are_a_leak(self):
        # The pool keeps 3 more connections every cycle (own fds flat): the last whole cycle's peak is 6 above the
        # first's, still under the 20 of the per-view ceiling.
        def leaking(t):
            return self.pool(t) + 3 * int((t - soak_schedule.FIRST) // soak_schedule.CYCLE)
        passed, lines = self.fd_verdicts(lambda t: 97 + leaking(t), leaking)
        self.assertFalse(passed, lines)
        self.assertTrue(lines[0].lstrip().startswith("ok"), lines)
        self.assertTrue(lines[1].lstrip().startswith("FAIL"), lines)
        self.assertIn("bound 20", lines[1])

    def judged(self, run, entry, **write):
        run.write(entry, **write)
        return run.judge()

    def assertFrozen(self, text, view, near, why):
        """The report has a frozen line for `view` starting within 3 s after `near` whose status says `why`."""
        lines = [line for line in text.splitlines() if line.startswith(f"frozen: view {view} from ")]
        self.assertTrue(lines, f"no frozen line for view {view}:\n{text}")
        start = float(lines[0].split(" from ")[1].split(" s ")[0])
        self.assertTrue(near <= start <= near + 3, f"view {view} frozen from {start} s, expected near {near} s:\n{text}")
        self.assertIn(why, lines[0], text)
        self.assertIn("FAIL 0 frozen views", text)

    def test_a_healthy_run_passes(self):
        run = self.new_run()
        passed, text, _ = self.judged(run, lambda v, t: playing(t))
        self.assertTrue(passed, text)
        self.assertIn("ok   0 frozen views: 0 frozen episode(s)", text)

    def test_a_view_reported_failed_is_frozen(self):
        run = self.new_run()
        passed, text, _ = self.judged(run, lambda v, t: "FAILED" if v == 2 and t >= 60 else playing(t))
        self.assertFalse(passed, text)
        self.assertFrozen(text, 2, 60, "FAILED")

    def test_a_view_failed_in_a_fault_is_frozen_once_its_allowance_ends(self):
        run = self.new_run()
        run.event(50, "fault-begin hls")
        run.event(60, "fault-end hls")
        passed, text, _ = self.judged(run, lambda v, t: "FAILED" if v == 3 and t >= 52 else playing(t))
        self.assertFalse(passed, text)
        self.assertFrozen(text, 3, 60 + soak_report.FAULT_RECOVERY + soak_report.FROZEN_AFTER, "FAILED")

    def test_a_view_retrying_for_good_is_frozen(self):
        run = self.new_run()
        passed, text, _ = self.judged(run, lambda v, t: "RETRYING" if v == 3 and t >= 60 else playing(t))
        self.assertFalse(passed, text)
        self.assertFrozen(text, 3, 60, "RETRYING")

    def test_a_view_that_stops_reporting_is_frozen(self):
        run = self.new_run()
        passed, text, _ = self.judged(run, lambda v, t: None if v == 2 and t >= 60 else playing(t))
        self.assertFalse(passed, text)
        self.assertFrozen(text, 2, 60, "missing from the status line")

    def test_a_view_playing_without_a_position_is_frozen(self):
        run = self.new_run()
        passed, text, _ = self.judged(run, lambda v, t: "PLAYING" if v == 2 and t >= 60 else playing(t))
        self.assertFalse(passed, text)
        self.assertFrozen(text, 2, 60, "PLAYING")

    def test_a_view_whose_position_stops_moving_is_frozen(self):
        run = self.new_run()
        passed, text, _ = self.judged(run, lambda v, t: playing(60) if v == 1 and t >= 60 else playing(t))
        self.assertFalse(passed, text)
        self.assertFrozen(text, 1, 61, "position not moving")

    def test_a_view_that_never_plays_is_frozen(self):
        # Start-up lasts until every view plays at once: a view that never does must not make all of the run
        # start-up (nothing would be frozen then).
        run = self.new_run()
        passed, text, _ = self.judged(run, lambda v, t: "FAILED" if v == 3 else playing(t))
        self.assertFalse(passed, text)
        self.assertFrozen(text, 3, soak_report.STARTUP_LIMIT + soak_report.REALIGN + soak_report.FROZEN_AFTER,
                          "never PLAYING")

    def test_the_player_dying_mid_run_freezes_every_view_and_fails(self):
        # The last soak: the player died at the PulseAudio kill; the fault never ended (the schedule stops with the
        # player), the status lines stopped, and the later skew blocks were just empty.
        run = self.new_run()
        run.event(50, "fault-begin pulse")
        run.event(55, "player-exited")
        run.event(56, "end alive=0")
        run.event(56.1, "exit-after-q none (the player had exited before q)")
        passed, text, asked = self.judged(run, lambda v, t: "BUFFERING" if t >= 50 else playing(t), until=52,
                                          alive=False, stderr=[(52.5, "Fatal error: the cause")])
        self.assertFalse(passed, text)
        death = [line for line in text.splitlines() if "the player process exited" in line]
        self.assertTrue(death, f"no line says the player exited:\n{text}")
        self.assertIn("frozen: views 1,2,3 from 52.3 s", death[0])
        self.assertIn("during fault pulse", death[0])
        self.assertIn("Fatal error: the cause", death[0])
        self.assertIn("FAIL 0 frozen views: 3 frozen episode(s), 3 of them the player's death", text)
        self.assertIn("FAIL player alive at the end: exited at 52.3 s", text)
        # The skew is asked for the whole planned run, so blocks after the death show as empty (and fail).
        self.assertEqual([round(until - T0) for _, until in asked], [LENGTH], text)

    def test_a_player_dead_before_its_first_status_line_fails(self):
        run = self.new_run()
        run.event(2, "player-exited")
        run.event(2.5, "end alive=0")
        passed, text, _ = self.judged(run, lambda v, t: playing(t), until=-1, alive=False,
                                      stderr=[(1, "error: cannot open the display")])
        self.assertFalse(passed, text)
        self.assertIn("frozen: views (none listed yet) from 0.0 s", text)
        self.assertIn("cannot open the display", text)
        self.assertIn("FAIL 0 frozen views: 1 frozen episode(s), 1 of them the player's death", text)



class SoakScheduleTests(unittest.TestCase):
    """The schedule's tail: whatever the run's length, the group ends it playing, at rate 1, short of the media's
    end (a 10 min soak's views all reached the end 0.7 s before `q`, so the player, done, exited and the run
    failed). Followed here by an independent walk over the printed schedule."""

    def walk(self, seconds):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sys.argv = ["soak_schedule.py", str(seconds), "http://x/angle4.m3u8"]
            soak_schedule.main()
        pos, rate, paused, t = 0.0, 1.0, False, 0.0
        highest = 0.0
        for line in out.getvalue().splitlines():
            at, kind, text = line.split(" ", 2)
            at = float(at)
            if not paused:
                pos += (at - t) * rate
            t = at
            highest = max(highest, pos)
            if kind == "cmd" and text != "s" and not text.startswith(("add", "subs", "audio", "r ")):
                pos, rate, paused = soak_schedule.apply(text, pos, rate, paused)
        end = pos + (0 if paused else (seconds - t) * rate)
        return max(highest, end), rate, paused

    def test_every_run_length_ends_playing_short_of_the_media_end(self):
        for seconds in range(60, 1900, 7):
            highest, rate, paused = self.walk(seconds)
            self.assertLess(highest, soak_schedule.MEDIA_END, f"{seconds} s: the media reaches its end")
            self.assertFalse(paused, f"{seconds} s: the run ends paused")
            self.assertEqual(rate, 1.0, f"{seconds} s: the run ends at rate {rate}")

if __name__ == "__main__":
    unittest.main()
