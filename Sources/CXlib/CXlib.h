// Umbrella header of the Xlib system-library module: the grid window and the external display window
// (Multiview's Stage, Routing).
#pragma once
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
// Xft: the grid window's tile tags in an anti-aliased font (fontconfig picks it, as pango does for GStreamer).
#include <X11/Xft/Xft.h>
