#ifndef RELINK_CDBUS_SHIM_H
#define RELINK_CDBUS_SHIM_H
#include <dbus/dbus.h>
#include <sys/eventfd.h>

/// An eventfd (close-on-exec, non-blocking) used to wake a connection's I/O
/// thread out of poll().
static inline int relink_dbus_wake_fd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
#endif
