#!/usr/bin/env python3
"""The fixed schedule of Scripts/soak: stdin commands and faults, one per line, in time order.

    python3 Scripts/lib/soak_schedule.py SECONDS ADD_URI

prints "SECONDS cmd TEXT" and "SECONDS fault NAME begin|end" (seconds from the player's start). A 240 s cycle
starting 20 s in (the views open first) is repeated until SECONDS - 10; `add ADD_URI` comes once, 25 s in.
The media is 24 s long: the generator follows the group's media position through every command (rate, pause,
seeks) and fails if a view could reach the end before the next seek (an ended view would look frozen).
Fault windows (begin -> end) are 10 s each for the routed sink and the HLS server, 3 s for PulseAudio; the
report adds the recovery allowance.
"""
import sys

CYCLE = 240.0
FIRST = 20.0
MEDIA_END = 24.0
MARGIN = 2.0   # the position must stay this far from the end

# (seconds into the cycle, command)
COMMANDS = [
    (0, "seek 2"), (4, "+5"), (8, "p"), (11, "p"), (14, "seek 3"), (16, "rate 2"), (20, "rate 1"),
    (24, "subs 3 off"), (26, "seek 2"), (28, "subs 3 en"), (32, "seek -1"), (36, "seek 4"), (40, "r 2"),
    (46, "seek 2"), (54, "audio 2"), (58, "seek 3"), (62, "audio 5"), (66, "-2"), (70, "seek 6"),
    (74, "audio 1"), (78, "seek 2"), (82, "s"), (86, "+4"), (90, "seek 1"), (94, "p"), (97, "p"),
    (100, "seek 5"), (104, "rate 2"), (107, "rate 1"), (110, "seek 2"), (116, "+3"), (122, "seek 4"),
    (126, "subs 3 off"), (130, "subs 3 en"), (134, "seek 2"), (140, "r 7"), (146, "seek 3"), (150, "audio 3"),
    (154, "seek 8"), (158, "-4"), (162, "seek 2"), (166, "audio 1"), (170, "seek 5"), (176, "seek 2"),
    (180, "p"), (183, "p"), (186, "seek 4"), (190, "rate 2"), (193, "rate 1"), (196, "seek 3"),
    (200, "subs 3 off"), (203, "subs 3 en"), (206, "seek 2"), (212, "+5"), (218, "seek 4"), (222, "audio 2"),
    (226, "seek 1"), (232, "audio 1"), (236, "seek 2"),
]
# (seconds into the cycle, fault name, seconds until it ends)
FAULTS = [(50, "sink", 10), (110, "hls", 10), (170, "pulse", 3)]


def check_positions():
    """Follows the media position through one cycle (and into the next one's first seek)."""
    pos, rate, paused, t = 2.0, 1.0, False, 0.0
    for at, text in COMMANDS + [(CYCLE, "seek 2")]:
        if not paused:
            pos += (at - t) * rate
        t = at
        if pos > MEDIA_END - MARGIN:
            sys.exit(f"soak_schedule: at {at:g} s into the cycle the media would be at {pos:.1f} s (ends at "
                     f"{MEDIA_END:g} s): seek back sooner")
        pos, rate, paused = apply(text, pos, rate, paused)


def apply(text, pos, rate, paused):
    """The group's (position, rate, paused) after one command."""
    words = text.split()
    if words[0] == "seek" and not words[1][0] in "+-":
        pos = float(words[1])
    elif words[0] in ("seek",) or words[0][0] in "+-":
        pos = max(0.0, pos + float(words[-1]))
    elif words[0] == "rate":
        rate = float(words[1])
    elif words[0] == "p":
        paused = not paused
    return pos, rate, paused


def run_out(commands, total):
    """Commands that leave the group playing at rate 1, away from the media's end, until the run ends: the cycle
    is cut at `total - 10`, which can leave it paused, at rate 2, or playing on into the end (a 10 min soak's views
    all reached the end 0.7 s before `q`, and the player, done, exited)."""
    pos, rate, paused, t = 0.0, 1.0, False, 0.0
    for at, text in commands:
        if not paused:
            pos += (at - t) * rate
        t = at
        pos, rate, paused = apply(text, pos, rate, paused)
    extra, at = [], t + 2.0
    for needed, text in ((paused, "p"), (rate != 1.0, "rate 1")):
        if needed:
            if not paused:
                pos += (at - t) * rate
            t = at
            pos, rate, paused = apply(text, pos, rate, paused)
            extra.append((at, "cmd", text))
            at += 2.0
    if pos + (total - t) > MEDIA_END - MARGIN:
        extra.append((at, "cmd", "seek 2"))
    return extra


def main():
    total, add_uri = float(sys.argv[1]), sys.argv[2]
    check_positions()
    lines = [(25.0, "cmd", f"add {add_uri}")]
    start = FIRST
    while start < total - 10:
        for at, text in COMMANDS:
            if start + at < total - 10:
                lines.append((start + at, "cmd", text))
        for at, name, length in FAULTS:
            if start + at + length < total - 10:
                lines.append((start + at, "fault", f"{name} begin"))
                lines.append((start + at + length, "fault", f"{name} end"))
        start += CYCLE
    commands = [(at, text) for at, kind, text in sorted(lines, key=lambda line: line[0]) if kind == "cmd"]
    lines += run_out(commands, total)
    for at, kind, text in sorted(lines, key=lambda line: line[0]):
        print(f"{at:.1f} {kind} {text}")


if __name__ == "__main__":
    main()
