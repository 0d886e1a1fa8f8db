import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService

/// The store's schema and its migrations.
///
/// The database is marked with ``applicationID`` (`PRAGMA application_id`) so a foreign SQLite file is
/// recognised, and carries its schema version in `PRAGMA user_version`. Migration *n* turns version
/// *n − 1* into version *n*; each runs in the transaction that also bumps the version.
enum Schema {
    /// "PRMT": marks a Perimeter database.
    static let applicationID: Int64 = 0x5052_4D54

    /// The page size, in bytes, of a store file created by this version (files created earlier keep
    /// SQLite's 4 KiB).
    ///
    /// The write-ahead log records every page a commit changes in full, and a typical commit changes a
    /// few bytes in each of many pages: one device row per update, scattered over the device table.
    /// With 1 KiB pages a commit writes about a quarter of the bytes it writes with 4 KiB, and
    /// checkpoints sync that much less (docs/service.md, "Page size").
    static let pageSize = 1024

    /// The migrations, in order; the schema version is their count.
    static let migrations: [String] = [
        // 1: the initial schema.
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
        CREATE TABLE fence (
            id TEXT PRIMARY KEY, position INTEGER NOT NULL, feature TEXT NOT NULL,
            grp TEXT, name TEXT, dwell_time REAL, expires_at REAL) WITHOUT ROWID;
        CREATE TABLE device (
            id TEXT NOT NULL UNIQUE, last_time REAL NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL,
            update_count INTEGER NOT NULL);
        CREATE TABLE presence (
            device TEXT NOT NULL, fence TEXT NOT NULL, entry_time REAL NOT NULL,
            visit_sequence INTEGER NOT NULL, has_dwelled INTEGER NOT NULL,
            PRIMARY KEY (device, fence)) WITHOUT ROWID;
        CREATE TABLE consent (device TEXT PRIMARY KEY, granted INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE event (
            sequence INTEGER PRIMARY KEY, id TEXT NOT NULL, visit_id TEXT NOT NULL, kind TEXT NOT NULL,
            fence TEXT NOT NULL, device TEXT NOT NULL, time REAL NOT NULL,
            latitude REAL NOT NULL, longitude REAL NOT NULL, time_inside REAL,
            observed_at REAL NOT NULL, reason TEXT NOT NULL);
        """,
        // 2: detection options — per-device option and stream state, fence addition sequences.
        """
        ALTER TABLE fence ADD COLUMN added_sequence INTEGER;
        CREATE TABLE device_option (device TEXT PRIMARY KEY, state BLOB NOT NULL);
        """,
        // 3: devices keyed by id (one B-tree to update instead of a table and its UNIQUE index); their
        // first-appearance order, formerly the rowid, is kept in `position`.
        """
        CREATE TABLE device_v3 (
            id TEXT PRIMARY KEY, position INTEGER NOT NULL, last_time REAL NOT NULL, latitude REAL NOT NULL,
            longitude REAL NOT NULL, update_count INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO device_v3 (id, position, last_time, latitude, longitude, update_count)
            SELECT id, rowid, last_time, latitude, longitude, update_count FROM device;
        DROP TABLE device;
        ALTER TABLE device_v3 RENAME TO device;
        CREATE INDEX device_position ON device (position);
        """,
        // 4: events carry their fence's name, group, properties (JSON text, NULL for none) and rendered
        // message, fixed when logged. Events logged before get the name, group and properties of their
        // fence as it is now, when it still exists (what was reported for them until then); no message.
        """
        ALTER TABLE event ADD COLUMN fence_name TEXT;
        ALTER TABLE event ADD COLUMN grp TEXT;
        ALTER TABLE event ADD COLUMN properties TEXT;
        ALTER TABLE event ADD COLUMN message TEXT;
        UPDATE event SET
            fence_name = (SELECT name FROM fence WHERE fence.id = event.fence),
            grp = (SELECT grp FROM fence WHERE fence.id = event.fence),
            properties = (SELECT CASE json_type(feature, '$.properties') WHEN 'object' THEN json_extract(feature, '$.properties') END
                          FROM fence WHERE fence.id = event.fence);
        UPDATE event SET properties = NULL WHERE properties = '{}';
        """,
        // 5: visit ids derived from what the visit is. A visit's ordinal (which visit of its fence
        // beginning at that instant it is) is part of its id; NULL in rows written before, whose ids
        // are derived from visit_sequence as they were. A device's visits that began and ended at one
        // instant (InstantVisitCodec; NULL for none).
        """
        ALTER TABLE presence ADD COLUMN ordinal INTEGER;
        ALTER TABLE device ADD COLUMN instant_visits BLOB;
        """,
        // 6: fences in a rowid table with the feature text last. A feature is kilobytes (a large one
        // megabytes) and lives in overflow pages either way; a WITHOUT ROWID table keeps such rows in a
        // B-tree ordered by id, whose leaves split and rebalance as rows arrive in any order, where a rowid
        // table appends and only the small id index is kept in order (measured: 10,000 fences of 3.6 KB,
        // about 0.25 s less). Last, the feature no longer sits between a row's id and its small columns.
        """
        CREATE TABLE fence_v6 (
            id TEXT PRIMARY KEY, position INTEGER NOT NULL, grp TEXT, name TEXT, dwell_time REAL, expires_at REAL,
            added_sequence INTEGER, feature TEXT NOT NULL);
        INSERT INTO fence_v6 (id, position, grp, name, dwell_time, expires_at, added_sequence, feature)
            SELECT id, position, grp, name, dwell_time, expires_at, added_sequence, feature FROM fence ORDER BY position;
        DROP TABLE fence;
        ALTER TABLE fence_v6 RENAME TO fence;
        """,
        // 7: devices keyed by an integer (the rowid), the id in a UNIQUE column written once per device;
        // presence and option rows keyed by that integer. A commit updates a device by its key: an integer
        // seek in the table's B-tree instead of a text comparison at every level, and smaller presence
        // keys. The key is given in first-appearance order (a new device gets the largest key plus one), so
        // it replaces `position` and its index. Run after `orphanCheck` (see `steps`).
        """
        CREATE TABLE device_v7 (
            key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, last_time REAL NOT NULL, latitude REAL NOT NULL,
            longitude REAL NOT NULL, update_count INTEGER NOT NULL, instant_visits BLOB);
        INSERT INTO device_v7 (key, id, last_time, latitude, longitude, update_count, instant_visits)
            SELECT row_number() OVER (ORDER BY position, id), id, last_time, latitude, longitude, update_count, instant_visits
            FROM device;
        CREATE TABLE presence_v7 (
            device INTEGER NOT NULL, fence TEXT NOT NULL, entry_time REAL NOT NULL, visit_sequence INTEGER NOT NULL,
            has_dwelled INTEGER NOT NULL, ordinal INTEGER, PRIMARY KEY (device, fence)) WITHOUT ROWID;
        INSERT INTO presence_v7 (device, fence, entry_time, visit_sequence, has_dwelled, ordinal)
            SELECT d.key, p.fence, p.entry_time, p.visit_sequence, p.has_dwelled, p.ordinal
            FROM presence p JOIN device_v7 d ON d.id = p.device;
        CREATE TABLE device_option_v7 (device INTEGER PRIMARY KEY, state BLOB NOT NULL);
        INSERT INTO device_option_v7 (device, state)
            SELECT d.key, o.state FROM device_option o JOIN device_v7 d ON d.id = o.device;
        DROP TABLE presence;
        DROP TABLE device_option;
        DROP TABLE device;
        ALTER TABLE device_v7 RENAME TO device;
        ALTER TABLE presence_v7 RENAME TO presence;
        ALTER TABLE device_option_v7 RENAME TO device_option;
        """,
        // 8: what changes at every update of a device (time, position, update count) in one fixed-size
        // BLOB, `state` (DeviceStateCodec), which a commit overwrites in place through SQLite's BLOB
        // I/O rather than an upsert statement per row; it begins with a check of the device's id. The
        // table is made here; `fillDeviceState` (see `steps`) copies the rows, then `deviceStateSwap`.
        """
        CREATE TABLE device_v8 (
            key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, state BLOB NOT NULL, instant_visits BLOB);
        """,
        // 9: event rows in compact form (EventRowCodec): `kind` and `reason` as integer codes, and an
        // id the engine made as its 16 bytes. `id` and `visit_id` have no type affinity: they hold a
        // 16-byte BLOB or the id's text, and readers decode either. Rows logged before keep their ids'
        // text (SQLite 3.40 cannot turn hex into a BLOB; they read back the same either way); their
        // kind and reason get their codes (a value that is neither stays text, refused when read as
        // before). The table is copied: a TEXT column would store a code as text.
        """
        CREATE TABLE event_v9 (
            sequence INTEGER PRIMARY KEY, id BLOB NOT NULL, visit_id BLOB NOT NULL, kind INTEGER NOT NULL,
            fence TEXT NOT NULL, device TEXT NOT NULL, time REAL NOT NULL, latitude REAL NOT NULL,
            longitude REAL NOT NULL, time_inside REAL, observed_at REAL NOT NULL, reason INTEGER NOT NULL,
            fence_name TEXT, grp TEXT, properties TEXT, message TEXT);
        INSERT INTO event_v9 (sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside,
                              observed_at, reason, fence_name, grp, properties, message)
            SELECT sequence, id, visit_id,
                CASE kind WHEN 'entry' THEN 0 WHEN 'dwell' THEN 1 WHEN 'exit' THEN 2 WHEN 'cross' THEN 3
                          WHEN 'inside' THEN 4 ELSE kind END,
                fence, device, time, latitude, longitude, time_inside, observed_at,
                CASE reason WHEN 'left' THEN 0 WHEN 'timeout' THEN 1 WHEN 'reset' THEN 2 ELSE reason END,
                fence_name, grp, properties, message
            FROM event ORDER BY sequence;
        DROP TABLE event;
        ALTER TABLE event_v9 RENAME TO event;
        """,
        // 10: a device's presence in one row keyed by the device's key, every membership in one BLOB
        // (PresenceCodec), instead of a row per membership: a commit writes one row for a device whose
        // presence changed, whatever it entered, left or dwelled in. A rowid table of its own rather than
        // a column of `device`: the device rows a commit rewrites in place stay small and dense in their
        // pages (each page a commit touches is written to the log whole). A device inside no fence has no
        // row or an empty one. The table is made here; `fillPresence` (see `steps`) copies the rows, then
        // `presenceSwap`.
        """
        CREATE TABLE presence_v10 (device INTEGER PRIMARY KEY, memberships BLOB NOT NULL);
        """,
    ]

    /// Migration 8's last part, after `fillDeviceState`: the new device table replaces the old one.
    static let deviceStateSwap = """
        DROP TABLE device;
        ALTER TABLE device_v8 RENAME TO device;
        """

    /// Migration 10's last part, after `fillPresence`: the new presence table replaces the old one.
    static let presenceSwap = """
        DROP TABLE presence;
        ALTER TABLE presence_v10 RENAME TO presence;
        """

    /// The migrations as steps for `useWriteAheadLogAndMigrate`: the SQL of ``migrations``, and before
    /// migration 7 a check that every presence and option row names a stored device (that migration
    /// joins them to the device table and would otherwise drop such rows without a word, where `load`
    /// of the older file reported the database inconsistent).
    /// Migration 8 builds each row's `state` BLOB in Swift (SQLite 3.40 has no function that makes a
    /// BLOB of a number's bytes).
    static var steps: [Migration] {
        migrations.enumerated().map { index, sql in
            switch index {
            case 6:
                Migration { db in
                    try orphanCheck(db)
                    try db.execute(sql)
                }
            case 7:
                Migration { db in
                    try db.execute(sql)
                    try fillDeviceState(db)
                    try db.execute(deviceStateSwap)
                }
            case 9:
                Migration { db in
                    try db.execute(sql)
                    try fillPresence(db)
                    try db.execute(presenceSwap)
                }
            default:
                .sql(sql)
            }
        }
    }

    /// Migration 8's copy: every row of the version-7 `device` table into `device_v8`, with the same
    /// key, id and instant visits, and its time, position and update count as a `state` BLOB.
    static func fillDeviceState(_ db: Database) throws {
        let rows = try db.statement("SELECT key, id, last_time, latitude, longitude, update_count, instant_visits FROM device ORDER BY key")
        defer { rows.reset() }
        let insert = try db.statement("INSERT INTO device_v8 (key, id, state, instant_visits) VALUES (?, ?, ?, ?)")
        while try rows.step() {
            let id = DeviceID(rows.string(1))
            let snapshot = DetectionEngine.DeviceSnapshot(
                device: id, lastTime: rows.double(2),
                lastCoordinate: Coordinate(latitude: rows.double(3), longitude: rows.double(4)),
                updateCount: UInt64(bitPattern: rows.int64(5)), memberships: [])
            insert.bind(rows.int64(0), at: 1)
            insert.bind(id.rawValue, at: 2)
            insert.bind(DeviceStateCodec.encode(snapshot), at: 3)
            insert.bind(rows.isNull(6) ? nil : rows.blob(6), at: 4)
            try insert.execute()
        }
    }

    /// Migration 10's copy: the version-9 presence rows of each device key as one row of `presence_v10`,
    /// its memberships sorted by fence as `load` returned them. The values are read as `load` of a
    /// version-9 file read them, and a row it refused (an ordinal out of range) fails the migration with
    /// the same error, leaving the file at version 9. A key without a device row is copied as it is:
    /// `load` reports it as before.
    static func fillPresence(_ db: Database) throws {
        let rows = try db.statement("SELECT device, fence, entry_time, visit_sequence, has_dwelled, ordinal FROM presence ORDER BY device")
        defer { rows.reset() }
        let insert = try db.statement("INSERT INTO presence_v10 (device, memberships) VALUES (?, ?)")
        var device: Int64?
        var memberships: [DetectionEngine.MembershipSnapshot] = []
        func flush() throws {
            guard let device else { return }
            memberships.sort { $0.fence < $1.fence }
            insert.bind(device, at: 1)
            insert.bind(PresenceCodec.encode(memberships), at: 2)
            try insert.execute()
            memberships.removeAll()
        }
        while try rows.step() {
            let key = rows.int64(0)
            if key != device {
                try flush()
                device = key
            }
            let ordinal = rows.isNull(5) ? nil : UInt32(exactly: rows.int64(5))
            guard rows.isNull(5) || ordinal != nil else {
                throw GeofencingError(.incompatibleStorage, "the store records visit ordinal \(rows.int64(5)) for device key \(key) in fence \(rows.string(1)), which is out of range; the database is damaged (it was left at its schema version)")
            }
            memberships.append(DetectionEngine.MembershipSnapshot(
                fence: FenceID(rows.string(1)), entryTime: rows.double(2),
                visitSequence: UInt64(bitPattern: rows.int64(3)), ordinal: ordinal, hasDwelled: rows.int64(4) != 0))
        }
        try flush()
    }

    /// Throws ``GeofencingError/Code/incompatibleStorage`` naming the first device that has presence or
    /// option rows but no device row, in a file before version 7 (devices keyed by id).
    static func orphanCheck(_ db: Database) throws {
        for (table, what) in [("presence", "presence"), ("device_option", "option state")] {
            if let orphan = try db.text("SELECT device FROM \(table) WHERE device NOT IN (SELECT id FROM device) LIMIT 1") {
                throw GeofencingError(.incompatibleStorage, "the store records \(what) for device \(orphan) but no state for it; the database is inconsistent (it was left at its schema version)")
            }
        }
    }

    /// The schema version this code writes.
    static var version: Int64 { Int64(migrations.count) }
}
