#ifndef RELINK_CDBUS_SHIM_H
#define RELINK_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
