// Umbrella header of the one system-library module: every C API Multiview uses, nothing of our own.
#pragma once
#include <gst/gst.h>
#include <gst/app/app.h>
#include <gst/video/video.h>
#include <gst/video/videooverlay.h>
#include <gst/audio/audio.h>
#include <gst/pbutils/pbutils.h>
#include <gst/net/net.h>
// GDBus (MPRIS2 remote control); GLib is already here through GStreamer.
#include <gio/gio.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
#include <pulse/pulseaudio.h>
