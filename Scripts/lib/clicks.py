"""Click detector for recordings of the bundled media (Scripts/bench-audio).

Every file in Media/ has a tone (330-1100 Hz) plus a 5 kHz, 5 ms click on every second. In a recording of a sink's
monitor where several views play, the clicks of views that are heard together overlap into one burst; clicks heard
apart show as separate bursts, or as a longer burst when they are less than about 2 ms apart. This module finds
the clicks and measures each one's onset and extent. Scripts/bench-audio records each view on its own channel and
compares the onsets. Same method as the by-ear test's ClickDetector (Tests/CoordinationTests/
PulseAudioCoordinationTests.swift), with a band-pass instead of a high-pass.

Only numpy (Debian's python3-numpy 1.24 or newer). Also a command line tool:

    python3 Scripts/lib/clicks.py RECORDING.raw [RATE]      (mono s16le; prints the clicks as JSON)
"""
import json
import sys

import numpy as np

RATE = 48000
GROUP_GAP_S = 0.1      # loud samples closer than this belong to one click region
PAIR_WINDOW_S = 0.5    # regions starting within this of a click's first region are the same second's click
EDGE_S = 0.5           # clicks closer than this to either end of the recording may be cut: ignored
BURST_GAP_S = 0.002    # a gap longer than this inside a click starts a new burst
GROUP_LEVEL = 0.15     # of the recording's loudest filtered sample: what counts as part of a click
EXTENT_LEVEL = 0.30    # of the click's own loudest sample: where its extent starts and ends


def read_s16le(path):
    """Mono signed 16-bit little-endian samples of a raw recording, as float64 in -1..1."""
    data = np.fromfile(path, dtype="<i2")
    return data.astype(np.float64) / 32768.0


def band_pass(x, rate=RATE, low=3000.0, high=7000.0, taps=129):
    """Linear-phase FIR band-pass (windowed sinc, Hamming), centred so it adds no delay. Removes the tones
    (<= 1.1 kHz, about -50 dB) and keeps the 5 kHz clicks; every click is smeared the same way, single or not."""
    n = np.arange(taps) - (taps - 1) / 2
    f1, f2 = low / rate, high / rate
    h = (2 * f2 * np.sinc(2 * f2 * n) - 2 * f1 * np.sinc(2 * f1 * n)) * np.hamming(taps)
    return np.convolve(x, h, mode="same")


def clicks(samples, rate=RATE):
    """The clicks in `samples`, one dict per click second:
    time (s, onset of the first burst), bursts, extent_ms (first to last sample above EXTENT_LEVEL of the click's
    peak), onset_gaps_ms (each later burst's onset after the first), first_burst_extent_ms, peak."""
    envelope = np.abs(band_pass(np.asarray(samples, dtype=np.float64), rate))
    if envelope.size == 0:
        return []
    peak = float(envelope.max())
    if peak < 0.01:
        return []
    loud = np.flatnonzero(envelope > GROUP_LEVEL * peak)
    # Regions: runs of loud samples with gaps < GROUP_GAP_S.
    breaks = np.flatnonzero(np.diff(loud) > GROUP_GAP_S * rate)
    starts = np.concatenate(([loud[0]], loud[breaks + 1]))
    ends = np.concatenate((loud[breaks], [loud[-1]]))
    # Clicks: regions within PAIR_WINDOW_S of the first region of the click (views heard > 100 ms apart are still
    # one second's click; one view's own clicks are 1 s apart and never merge).
    groups = []
    for s, e in zip(starts, ends):
        if groups and s - groups[-1][0] < PAIR_WINDOW_S * rate:
            groups[-1][1] = e
        else:
            groups.append([s, e])
    edge, margin = int(EDGE_S * rate), int(0.01 * rate)
    result = []
    for s, e in groups:
        if s < edge or e > len(envelope) - edge:
            continue
        lo, hi = s - margin, e + margin + 1
        local = envelope[lo:hi]
        local_peak = float(local.max())
        above = np.flatnonzero(local > EXTENT_LEVEL * local_peak) + lo
        gaps = np.flatnonzero(np.diff(above) > BURST_GAP_S * rate)
        onsets = np.concatenate(([above[0]], above[gaps + 1]))
        first_end = above[gaps[0]] if len(gaps) else above[-1]
        result.append({
            "time": round(float(above[0]) / rate, 6),
            "bursts": int(len(onsets)),
            "extent_ms": round(float(above[-1] - above[0]) / rate * 1000, 3),
            "onset_gaps_ms": [round(float(o - above[0]) / rate * 1000, 3) for o in onsets[1:]],
            "first_burst_extent_ms": round(float(first_end - above[0]) / rate * 1000, 3),
            "peak": round(local_peak, 4),
        })
    return result


def tone_levels(samples, frequencies, rate=RATE):
    """Amplitude of each frequency, averaged over 100 ms windows (10 Hz bins); a full-scale sine gives 1."""
    window = rate // 10
    count = len(samples) // window
    if count == 0:
        return [0.0 for _ in frequencies]
    frames = np.asarray(samples[: count * window], dtype=np.float64).reshape(count, window)
    spectrum = np.abs(np.fft.rfft(frames, axis=1)) * 2 / window
    return [round(float(spectrum[:, int(round(f * window / rate))].mean()), 4) for f in frequencies]


if __name__ == "__main__":
    rate = int(sys.argv[2]) if len(sys.argv) > 2 else RATE
    print(json.dumps(clicks(read_s16le(sys.argv[1]), rate), indent=2))
