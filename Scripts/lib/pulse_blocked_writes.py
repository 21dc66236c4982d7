#!/usr/bin/env python3
"""Blocked pulsesink writes in a GStreamer debug log (issues 13 and 15: views whose video stands still while
PulseAudio takes no samples from their stream).

    GST_DEBUG=pulse:6[,audiobasesink:5] GST_DEBUG_NO_COLOR=1 GST_DEBUG_FILE=gst.log multiview play ...
    Scripts/lib/pulse_blocked_writes.py gst.log [--over 0.5]

pulsesink logs "waiting for free space" each time its write finds no room in the stream's buffer and waits for
PulseAudio to ask for more, and "requesting N bytes of shared memory" once it has room again. A blocked write is
the time from the first of those waits to the next request, on one streaming thread (every view's sink is named
"pulse", so the thread tells the views apart). A paused view's sink waits as long as the pause; anything else over
a second is PulseAudio not reading that stream, which blocks the demuxer behind it. With audiobasesink:5 the sink's
custom-slaving corrections (the audio clock follower's) over 5 ms are listed per thread as well, to see whether a
correction comes right before a block. (Why a write can wait seconds, read in the 1.22 / PulseAudio 16 sources,
untested: pulsesink writes at absolute stream positions, and the server counts a forward jump of its write index
as data delivered, so a write placed D ahead of the read position gets no new request until D has been played.)
"""
import argparse
import collections
import re

WRITE = re.compile(r'^(\d+):(\d+):(\d+\.\d+)\s+\d+\s+(0x[0-9a-f]+) .*<[^>]+> (waiting for free space|requesting \d+ bytes)')
SKEW = re.compile(r'^(\d+):(\d+):(\d+\.\d+)\s+\d+\s+(0x[0-9a-f]+) .*requested skew ([+-])(\d+):(\d+):(\d+\.\d+)')


def seconds(h, m, s):
    return int(h) * 3600 + int(m) * 60 + float(s)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('log')
    parser.add_argument('--over', type=float, default=0.5, help='list blocks longer than this (s)')
    args = parser.parse_args()
    waiting, blocks, skews, writes = {}, collections.defaultdict(list), collections.defaultdict(list), collections.Counter()
    with open(args.log, errors='replace') as log:
        for line in log:
            m = WRITE.match(line)
            if m:
                at, thread = seconds(*m.group(1, 2, 3)), m.group(4)
                if m.group(5).startswith('waiting'):
                    waiting.setdefault(thread, at)
                else:
                    writes[thread] += 1
                    if thread in waiting:
                        began = waiting.pop(thread)
                        if at - began > args.over:
                            blocks[thread].append((began, at - began))
                continue
            m = SKEW.match(line)
            if m:
                ms = (1 if m.group(5) == '+' else -1) * seconds(*m.group(6, 7, 8)) * 1000
                if abs(ms) > 5:
                    skews[m.group(4)].append((seconds(*m.group(1, 2, 3)), ms))
    for thread in sorted(set(writes) | set(blocks)):
        listed = ', '.join(f'{b:.2f} s for {d:.2f} s' for b, d in blocks[thread]) or 'none'
        print(f'{thread}: {writes[thread]} writes; blocked over {args.over} s: {listed}')
        if skews[thread]:
            print('    corrections over 5 ms: ' + ', '.join(f'{t:.2f} s {ms:+.1f} ms' for t, ms in skews[thread]))
    for thread, began in waiting.items():
        print(f'{thread}: still waiting at the end of the log, since {began:.2f} s')


if __name__ == '__main__':
    main()
