// Umbrella header of the GIO system-library module: GDBus and GVariant for the MPRIS2 remote control
// (RemoteControl only).
#pragma once
#include <gio/gio.h>
