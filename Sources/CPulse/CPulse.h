// Umbrella header of the libpulse system-library module: the PulseAudio client of the audio routes (Routing only).
#pragma once
#include <pulse/pulseaudio.h>
