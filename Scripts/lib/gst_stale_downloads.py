#!/usr/bin/env python3
"""Counts adaptivedemux2 downloads that escaped a cancellation, from a GStreamer log with adaptivedemux2:6.

    python3 Scripts/lib/gst_stale_downloads.py GST_LOG

GStreamer 1.22.0's download helper cancels a request only if its HTTP thread already took it from its queue
("Cancelling request for URI U" followed by "Found transfer ... U"). A cancel without "Found transfer" whose URI
is then submitted by that thread ("submit_transfer: Submitting request URI U") before the stream asks for U again
is a stale download: it completes into the restarted stream (issue 15's abort, `download_request_set_uri`). Prints
one line per stale submission and a total; exit 0 always (a measurement, not a verdict).
"""
import re, sys


def main(path):
    lines = open(path, errors="replace").read().splitlines()
    unmatched = {}  # URI -> log time of a cancel that found no transfer
    cancels = stale = 0
    for i, line in enumerate(lines):
        if "downloadhelper_cancel_request: Cancelling request for URI" in line:
            uri = re.search(r"URI (\S+) range", line).group(1)
            cancels += 1
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if "Found transfer" not in following:
                unmatched[uri] = line.split()[0]
        elif "begin_download_uri" in line and "Downloading" in line:
            m = re.search(r"uri: (\S+),", line)
            if m:
                unmatched.pop(m.group(1), None)
        elif "submit_transfer: Submitting request URI" in line:
            uri = re.search(r"URI (\S+) range", line).group(1)
            if uri in unmatched:
                stale += 1
                print(f"stale: cancelled at {unmatched.pop(uri)}, submitted at {line.split()[0]}: {uri}")
    print(f"cancels {cancels}, stale submissions {stale}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gst_stale_downloads.py GST_LOG")
    main(sys.argv[1])
