/* The least any broker can do: a lower bound for relinkd's extra hop.
 *
 *   relay [--durable DATABASE] ADDRESS CLIENT_NAME CHARACTERISTIC_PATH...
 *
 * Subscribes to each characteristic (StartNotify) and, for each
 * PropertiesChanged(Value) bluetoothd sends for one of them, emits the value
 * at once as a unicast signal org.relink.bench.Relay.Value(ay) to
 * CLIENT_NAME, from the characteristic's own object path (so a client of
 * several links can tell them apart). No store, no sequence numbers, no
 * JSON, no checks beyond the signal's path: nothing a real agent could
 * leave out. Prints "ready" once subscribed to all.
 *
 * --durable: the least an agent that keeps each value until its client
 * has processed it can do, as relinkd's outbox does: each value is first
 * committed to an SQLite outbox (WAL, synchronous=FULL: one fdatasync per
 * commit), then sent as Value(ay, t sequence); the client's
 * org.relink.bench.Relay.Ack(t sequence) deletes what it covers in a
 * durable commit of its own before the reply. One transaction per value
 * and per Ack, as relinkd's group commit makes them when values come one
 * at a time.
 *
 * Used by restore_bench.py, steady_latency.py and stream_bench.py; built
 * there with
 *   cc -O2 relay.c $(pkg-config --cflags --libs dbus-1 sqlite3)
 */
#include <dbus/dbus.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **characteristics;
static int count;
static const char *client;
static sqlite3 *db;                     /* --durable: the outbox */
static sqlite3_stmt *insert, *delete_through;
static dbus_uint64_t sequence;

static int commit_step(sqlite3_stmt *statement) {
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return 0;
    int ok = sqlite3_step(statement) == SQLITE_DONE;
    sqlite3_reset(statement);
    if (sqlite3_exec(db, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK) return 0;
    return ok;
}

static int open_outbox(const char *path) {
    if (sqlite3_open(path, &db) != SQLITE_OK
        || sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                            "CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, link TEXT NOT NULL, value BLOB NOT NULL)",
                        NULL, NULL, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "INSERT INTO outbox (seq, link, value) VALUES (?, ?, ?)", -1, &insert, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "DELETE FROM outbox WHERE seq <= ?", -1, &delete_through, NULL) != SQLITE_OK) {
        fprintf(stderr, "relay: outbox %s: %s\n", path, sqlite3_errmsg(db));
        return 0;
    }
    return 1;
}

static void acknowledge(DBusConnection *c, DBusMessage *m) {
    dbus_uint64_t through = 0;
    DBusMessage *reply;
    if (!dbus_message_get_args(m, NULL, DBUS_TYPE_UINT64, &through, DBUS_TYPE_INVALID)) {
        reply = dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS, "Ack takes a sequence (t)");
    } else {
        sqlite3_bind_int64(delete_through, 1, (sqlite3_int64)through);
        reply = commit_step(delete_through) ? dbus_message_new_method_return(m)
                                            : dbus_message_new_error(m, DBUS_ERROR_FAILED, sqlite3_errmsg(db));
    }
    if (!reply) return;
    dbus_connection_send(c, reply, NULL);
    dbus_connection_flush(c);
    dbus_message_unref(reply);
}

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
        const char *path = dbus_message_get_path(m);
        if (db) {
            sqlite3_bind_int64(insert, 1, (sqlite3_int64)(sequence + 1));
            sqlite3_bind_text(insert, 2, path, -1, SQLITE_STATIC);
            sqlite3_bind_blob(insert, 3, bytes, n, SQLITE_STATIC);
            if (!commit_step(insert)) {
                fprintf(stderr, "relay: outbox: %s\n", sqlite3_errmsg(db));
                return;
            }
            sequence++;
        }
        DBusMessage *out = dbus_message_new_signal(path, "org.relink.bench.Relay", "Value");
        if (!out) return;
        dbus_message_set_destination(out, client);
        dbus_message_append_args(out, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, n, DBUS_TYPE_INVALID);
        if (db) dbus_message_append_args(out, DBUS_TYPE_UINT64, &sequence, DBUS_TYPE_INVALID);
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
    else if (db && dbus_message_is_method_call(m, "org.relink.bench.Relay", "Ack")) {
        acknowledge(c, m);
        return DBUS_HANDLER_RESULT_HANDLED;
    }
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--durable") == 0) {
        if (!open_outbox(argv[2])) return 1;
        argv += 2;
        argc -= 2;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: relay [--durable DATABASE] ADDRESS CLIENT_NAME CHARACTERISTIC_PATH...\n");
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
