/* The least any broker can do: a lower bound for relinkd's extra hop.
 *
 *   relay ADDRESS CLIENT_NAME CHARACTERISTIC_PATH...
 *
 * Subscribes to each characteristic (StartNotify) and, for each
 * PropertiesChanged(Value) bluetoothd sends for one of them, emits the value
 * at once as a unicast signal org.relink.bench.Relay.Value(ay) to
 * CLIENT_NAME, from the characteristic's own object path (so a client of
 * several links can tell them apart). No store, no sequence numbers, no
 * JSON, no checks beyond the signal's path: nothing a real agent could
 * leave out. Prints "ready" once subscribed to all.
 * Used by restore_bench.py, steady_latency.py and stream_bench.py; built
 * there with
 *   cc -O2 relay.c $(pkg-config --cflags --libs dbus-1)
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **characteristics;
static int count;
static const char *client;

static int subscribed(const char *path) {
    for (int i = 0; i < count; i++)
        if (strcmp(characteristics[i], path) == 0) return 1;
    return 0;
}

static void forward(DBusConnection *c, DBusMessage *m) {
    DBusMessageIter args, dict, entry, variant, array;
    const char *iface = NULL;
    if (!dbus_message_iter_init(m, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return;
    dbus_message_iter_get_basic(&args, &iface);
    if (strcmp(iface, "org.bluez.GattCharacteristic1") != 0 || !dbus_message_iter_next(&args)) return;
    if (dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return;
    for (dbus_message_iter_recurse(&args, &dict); dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&dict)) {
        const char *key = NULL;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "Value") != 0) continue;
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY) return;
        const unsigned char *bytes = NULL;
        int n = 0;
        dbus_message_iter_recurse(&variant, &array);
        dbus_message_iter_get_fixed_array(&array, &bytes, &n);
        DBusMessage *out = dbus_message_new_signal(dbus_message_get_path(m), "org.relink.bench.Relay", "Value");
        if (!out) return;
        dbus_message_set_destination(out, client);
        dbus_message_append_args(out, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, n, DBUS_TYPE_INVALID);
        dbus_connection_send(c, out, NULL);
        dbus_connection_flush(c);
        dbus_message_unref(out);
        return;
    }
}

static DBusHandlerResult on_message(DBusConnection *c, DBusMessage *m, void *data) {
    (void)data;
    if (dbus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged")
        && subscribed(dbus_message_get_path(m)))
        forward(c, m);
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: relay ADDRESS CLIENT_NAME CHARACTERISTIC_PATH...\n");
        return 2;
    }
    client = argv[2];
    characteristics = argv + 3;
    count = argc - 3;
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_connection_open_private(argv[1], &err);
    if (!c || !dbus_bus_register(c, &err)) {
        fprintf(stderr, "relay: connect: %s\n", err.message);
        return 1;
    }
    dbus_bus_add_match(c,
                       "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                       "member='PropertiesChanged',arg0='org.bluez.GattCharacteristic1'", &err);
    if (dbus_error_is_set(&err)) {
        fprintf(stderr, "relay: AddMatch: %s\n", err.message);
        return 1;
    }
    dbus_connection_add_filter(c, on_message, NULL, NULL);
    for (int i = 0; i < count; i++) {
        DBusMessage *start = dbus_message_new_method_call("org.bluez", characteristics[i],
                                                          "org.bluez.GattCharacteristic1", "StartNotify");
        DBusMessage *reply = dbus_connection_send_with_reply_and_block(c, start, 10000, &err);
        if (!reply) {
            fprintf(stderr, "relay: StartNotify %s: %s\n", characteristics[i], err.message);
            return 1;
        }
        dbus_message_unref(reply);
        dbus_message_unref(start);
    }
    printf("ready\n");
    fflush(stdout);
    while (dbus_connection_read_write_dispatch(c, -1)) {
    }
    return 0;
}
