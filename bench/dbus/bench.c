/* Minimal libdbus loops for the D-Bus benchmark: the limit the bus allows.
 *   bench serve   ADDRESS NAME          answer Ping(s) -> s until killed
 *   bench call    ADDRESS NAME COUNT    COUNT sequential Ping calls; prints calls_per_sec
 *   bench receive ADDRESS COUNT READY   count Tick signals; prints signals_per_sec
 *   bench emit    ADDRESS COUNT         emit COUNT Tick(u, s) signals
 * Built by run.sh with: cc -O2 bench.c $(pkg-config --cflags --libs dbus-1)
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static DBusConnection *connect_bus(const char *address) {
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_connection_open_private(address, &err);
    if (!c || !dbus_bus_register(c, &err)) {
        fprintf(stderr, "connect: %s\n", err.message);
        exit(1);
    }
    return c;
}

static void ready(const char *path) {
    FILE *f = fopen(path, "w");
    if (f) { fputs("ready\n", f); fclose(f); }
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    DBusConnection *c = connect_bus(argv[2]);
    DBusError err;
    dbus_error_init(&err);
    if (!strcmp(argv[1], "serve") && argc == 5) {
        dbus_bus_request_name(c, argv[3], DBUS_NAME_FLAG_DO_NOT_QUEUE, &err);
        ready(argv[4]);
        while (dbus_connection_read_write(c, -1)) {
            DBusMessage *m;
            while ((m = dbus_connection_pop_message(c))) {
                if (dbus_message_is_method_call(m, "org.relink.Bench", "Ping")) {
                    const char *s = "";
                    dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
                    DBusMessage *r = dbus_message_new_method_return(m);
                    dbus_message_append_args(r, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
                    dbus_connection_send(c, r, NULL);
                    dbus_message_unref(r);
                }
                dbus_message_unref(m);
            }
        }
    } else if (!strcmp(argv[1], "call") && argc == 5) {
        long n = atol(argv[4]);
        const char *s = "hello";
        double t0 = now();
        for (long i = 0; i < n; i++) {
            DBusMessage *m = dbus_message_new_method_call(argv[3], "/bench", "org.relink.Bench", "Ping");
            dbus_message_append_args(m, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
            DBusMessage *r = dbus_connection_send_with_reply_and_block(c, m, -1, &err);
            dbus_message_unref(m);
            if (!r) { fprintf(stderr, "call: %s\n", err.message); return 1; }
            const char *back = NULL;
            dbus_message_get_args(r, NULL, DBUS_TYPE_STRING, &back, DBUS_TYPE_INVALID);
            if (!back || strcmp(back, s)) { fprintf(stderr, "bad reply\n"); return 1; }
            dbus_message_unref(r);
        }
        printf("calls_per_sec=%.0f\n", n / (now() - t0));
    } else if (!strcmp(argv[1], "receive") && argc == 5) {
        long n = atol(argv[3]), got = 0;
        dbus_bus_add_match(c, "type='signal',interface='org.relink.Bench',member='Tick'", &err);
        if (dbus_error_is_set(&err)) { fprintf(stderr, "match: %s\n", err.message); return 1; }
        ready(argv[4]);
        double t0 = 0;
        while (got < n && dbus_connection_read_write(c, -1)) {
            DBusMessage *m;
            while (got < n && (m = dbus_connection_pop_message(c))) {
                if (dbus_message_is_signal(m, "org.relink.Bench", "Tick")) {
                    dbus_uint32_t seq = 0;
                    const char *s = NULL;
                    dbus_message_get_args(m, NULL, DBUS_TYPE_UINT32, &seq, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
                    if (seq != (dbus_uint32_t)got) { fprintf(stderr, "out of order: %u at %ld\n", seq, got); return 1; }
                    if (got == 0) t0 = now();
                    got++;
                }
                dbus_message_unref(m);
            }
        }
        printf("signals_per_sec=%.0f\n", (got - 1) / (now() - t0));
    } else if (!strcmp(argv[1], "emit") && argc == 4) {
        long n = atol(argv[3]);
        const char *s = "payload";
        for (long i = 0; i < n; i++) {
            DBusMessage *m = dbus_message_new_signal("/bench", "org.relink.Bench", "Tick");
            dbus_uint32_t seq = (dbus_uint32_t)i;
            dbus_message_append_args(m, DBUS_TYPE_UINT32, &seq, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
            dbus_connection_send(c, m, NULL);
            dbus_message_unref(m);
            if (i % 256 == 0) dbus_connection_flush(c);
        }
        dbus_connection_flush(c);
    } else {
        return 2;
    }
    dbus_connection_close(c);
    dbus_connection_unref(c);
    return 0;
}
