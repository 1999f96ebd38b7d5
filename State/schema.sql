-- relink restore store: the current schema (after migrations v1 to v6).
--
-- This file is what the migrations in Sources/RelinkStore/Schema/ produce on
-- a fresh database, kept equal to it by SchemaTests (which compares the
-- normalised `sqlite_master` dump and `PRAGMA user_version` with this file).
-- GRDB's own `grdb_migrations` table (the list of applied migrations) is not
-- listed here. The meaning of every table and column: State/README.md.

CREATE TABLE restore_identifier (
    id TEXT NOT NULL PRIMARY KEY,
    owner_uid INTEGER NOT NULL CHECK (owner_uid BETWEEN 0 AND 4294967295),
    name_preference TEXT NOT NULL CHECK (name_preference IN ('gap', 'advertising')),
    outbox_limit INTEGER NOT NULL CHECK (outbox_limit BETWEEN 1 AND 100000),
    created_at INTEGER NOT NULL,
    next_event_seq INTEGER NOT NULL DEFAULT 1 CHECK (next_event_seq >= 1),
    dropped_total INTEGER NOT NULL DEFAULT 0 CHECK (dropped_total >= 0),
    dropped_first_seq INTEGER,
    dropped_last_seq INTEGER,
    CHECK ((dropped_first_seq IS NULL) = (dropped_last_seq IS NULL))
) STRICT;

CREATE TABLE scan_intent (
    identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
    service_uuids BLOB NOT NULL CHECK (length(service_uuids) % 16 = 0),
    allow_duplicates INTEGER NOT NULL CHECK (allow_duplicates IN (0, 1)),
    updated_at INTEGER NOT NULL
    -- v5: advertising-data prefixes (text forms, space-separated), as SQLite's ALTER TABLE writes it.
    , data_prefixes TEXT NOT NULL DEFAULT '') STRICT;

CREATE TABLE peripheral (
    id BLOB NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    adapter TEXT NOT NULL,
    address TEXT NOT NULL,
    address_type TEXT NOT NULL CHECK (address_type IN ('public', 'random')),
    advertising_name TEXT,
    advertising_name_seen_at INTEGER,
    gap_name TEXT,
    gap_name_seen_at INTEGER,
    alias TEXT,
    service_uuids BLOB NOT NULL CHECK (length(service_uuids) % 16 = 0),
    last_seen_at INTEGER,
    created_at INTEGER NOT NULL,
    UNIQUE (adapter, address, address_type),
    CHECK ((advertising_name IS NULL) = (advertising_name_seen_at IS NULL)),
    CHECK ((gap_name IS NULL) = (gap_name_seen_at IS NULL))
) STRICT, WITHOUT ROWID;

CREATE TABLE connection_intent (
    identifier TEXT NOT NULL REFERENCES restore_identifier(id) ON DELETE CASCADE,
    peripheral_id BLOB NOT NULL REFERENCES peripheral(id) ON DELETE CASCADE,
    state TEXT NOT NULL CHECK (state IN ('pending', 'connecting', 'connected')),
    step_timeout_ms INTEGER CHECK (step_timeout_ms > 0),
    overall_timeout_ms INTEGER CHECK (overall_timeout_ms > 0),
    strategies TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL CHECK (attempts >= 0),
    last_error_class TEXT,
    last_error_message TEXT,
    -- v2: the match rule for an address that changed.
    match_name TEXT CHECK (length(CAST(match_name AS BLOB)) BETWEEN 1 AND 248),
    match_manufacturer_id INTEGER CHECK (match_manufacturer_id BETWEEN 0 AND 65535),
    match_services BLOB NOT NULL DEFAULT x'' CHECK (length(match_services) % 16 = 0),
    -- v5: the match rule's advertising-data prefixes (text forms, space-separated).
    match_data_prefixes TEXT NOT NULL DEFAULT '',
    -- v10: pair on demand when a read, write or subscription needs encryption (0 or 1).
    pair_on_demand INTEGER NOT NULL DEFAULT 1 CHECK (pair_on_demand IN (0, 1)),
    -- v11: the peripheral is bonded; the stored address is the identity a
    -- resolvable private address was resolved to (0 or 1 each).
    bonded INTEGER NOT NULL DEFAULT 0 CHECK (bonded IN (0, 1)),
    identity_address INTEGER NOT NULL DEFAULT 0 CHECK (identity_address IN (0, 1)),
    -- v12: the agent's I/O capability for this intent's pairings (BlueZ's names).
    pairing_capability TEXT NOT NULL DEFAULT 'NoInputNoOutput' CHECK (pairing_capability IN
        ('DisplayOnly', 'DisplayYesNo', 'KeyboardOnly', 'KeyboardDisplay', 'NoInputNoOutput')),
    PRIMARY KEY (identifier, peripheral_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX connection_intent_by_peripheral ON connection_intent(peripheral_id);

CREATE TABLE subscription (
    identifier TEXT NOT NULL REFERENCES restore_identifier(id) ON DELETE CASCADE,
    peripheral_id BLOB NOT NULL REFERENCES peripheral(id) ON DELETE CASCADE,
    service_uuid BLOB NOT NULL CHECK (length(service_uuid) = 16),
    characteristic_uuid BLOB NOT NULL CHECK (length(characteristic_uuid) = 16),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (identifier, peripheral_id, service_uuid, characteristic_uuid)
) STRICT, WITHOUT ROWID;

CREATE INDEX subscription_by_peripheral ON subscription(peripheral_id);

CREATE TABLE outbox_event (
    identifier TEXT NOT NULL REFERENCES restore_identifier(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL CHECK (seq >= 1),
    kind TEXT NOT NULL,
    payload BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (identifier, seq)
) STRICT, WITHOUT ROWID;

-- v3: the adapter status last announced to programs, per adapter.
CREATE TABLE adapter_state (
    adapter TEXT NOT NULL PRIMARY KEY CHECK (length(adapter) BETWEEN 1 AND 32),
    state TEXT NOT NULL CHECK (state IN ('poweredOn', 'poweredOff', 'blocked', 'missing', 'bluetoothdMissing', 'notPermitted')),
    roles TEXT NOT NULL,
    announced_at INTEGER NOT NULL
) STRICT;

-- v4: the last GATT database relinkd read per peripheral (GattDatabase's JSON).
CREATE TABLE gatt_database (
    peripheral_id BLOB NOT NULL PRIMARY KEY REFERENCES peripheral(id) ON DELETE CASCADE,
    layout TEXT NOT NULL CHECK (json_valid(layout)),
    read_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- v6: each identifier's peripheral role (PeripheralManagerRecord's JSON).
CREATE TABLE peripheral_manager (
    identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
    state TEXT NOT NULL CHECK (json_valid(state)),
    updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- v7: durable transfers (Central1.StartTransfer): the confirmed offset in a
-- small row, the bytes apart (an offset update never rewrites them).
CREATE TABLE transfer (
    id BLOB NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    identifier TEXT NOT NULL REFERENCES restore_identifier(id) ON DELETE CASCADE,
    peripheral_id BLOB NOT NULL REFERENCES peripheral(id) ON DELETE CASCADE,
    service_uuid BLOB NOT NULL CHECK (length(service_uuid) = 16),
    characteristic_uuid BLOB NOT NULL CHECK (length(characteristic_uuid) = 16),
    length INTEGER NOT NULL CHECK (length >= 1),
    confirmed INTEGER NOT NULL CHECK (confirmed >= 0 AND confirmed <= length),
    with_response INTEGER NOT NULL CHECK (with_response IN (0, 1)),
    resume INTEGER NOT NULL CHECK (resume IN (0, 1)),
    chunk_size INTEGER CHECK (chunk_size BETWEEN 1 AND 512),
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE transfer_data (
    transfer_id BLOB NOT NULL PRIMARY KEY REFERENCES transfer(id) ON DELETE CASCADE,
    data BLOB NOT NULL
) STRICT;

-- v8: each identifier's launch spec (docs/relaunch.md): the bus name relinkd
-- has the bus start, and the event kinds that wake it (a JSON array; empty: all).
CREATE TABLE launch_spec (
    identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
    bus_name TEXT NOT NULL CHECK (length(bus_name) BETWEEN 3 AND 255),
    wake_on TEXT NOT NULL CHECK (json_valid(wake_on) AND json_type(wake_on) = 'array'),
    updated_at INTEGER NOT NULL
, systemd_unit TEXT CHECK (systemd_unit IS NULL OR length(systemd_unit) BETWEEN 9 AND 255)) STRICT, WITHOUT ROWID;

-- v9: the starts of each relaunched program within the start window (and
-- launch_spec's systemd_unit column, above, added by ALTER TABLE).
CREATE TABLE launch_start (
    target TEXT NOT NULL CHECK (length(target) BETWEEN 3 AND 255),
    started_at INTEGER NOT NULL,
    PRIMARY KEY (target, started_at)
) STRICT, WITHOUT ROWID;

-- v13: each identifier's connection-event registration; the matching
-- peripherals it was told connected (16-byte UUIDs concatenated).
CREATE TABLE connection_event_registration (
    identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
    service_uuids BLOB NOT NULL CHECK (length(service_uuids) % 16 = 0),
    peripheral_ids BLOB NOT NULL CHECK (length(peripheral_ids) % 16 = 0),
    told_connected BLOB NOT NULL CHECK (length(told_connected) % 16 = 0),
    updated_at INTEGER NOT NULL
) STRICT;

PRAGMA user_version = 13;
