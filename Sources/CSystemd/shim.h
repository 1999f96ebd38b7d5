#ifndef RELINK_CSYSTEMD_SHIM_H
#define RELINK_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif
