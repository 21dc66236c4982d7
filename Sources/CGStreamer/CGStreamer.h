// Umbrella header of the GStreamer system-library module: the GStreamer C APIs Multiview uses (and GLib/GObject
// through them), nothing of our own. GIO, Xlib and libpulse have their own modules (CGIO, CXlib, CPulse).
#pragma once
#include <gst/gst.h>
#include <gst/app/app.h>
#include <gst/video/video.h>
#include <gst/video/videooverlay.h>
#include <gst/audio/audio.h>
#include <gst/pbutils/pbutils.h>
#include <gst/net/net.h>
