import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

/// Schema version 10: a device's presence in one row (`PresenceCodec`), and migration 10 from files of
/// version 9, whose rows were one per membership.
@Suite("SQLite store: presence rows")
struct PresenceRowTests {
    /// Fence ids with texts a byte comparison and a `String` comparison tell apart ("café" composed and
    /// decomposed), an empty id and a long one.
    static let fences: [FenceID] = ["park", "zoo", "é-garden", "caf\u{E9}", "cafe\u{301}", "", String(repeating: "long-", count: 30).fenceID, "北京"]

    static func randomMemberships(_ random: inout SplitMix64, time: Double) -> [DetectionEngine.MembershipSnapshot] {
        fences.filter { _ in random.next() % 3 == 0 }.map { fence in
            DetectionEngine.MembershipSnapshot(
                fence: fence, entryTime: random.next() % 9 == 0 ? -0.0 : time - Double(random.next() % 1000) / 8,
                visitSequence: random.next() % 5 == 0 ? UInt64.max - random.next() % 3 : random.next() % 90,
                ordinal: random.next() % 4 == 0 ? nil : UInt32(random.next() % 3 == 0 ? UInt64(UInt32.max) : random.next() % 3),
                hasDwelled: random.next() % 2 == 0)
        }
    }

    static func randomDevices(seed: UInt64, count: Int = 70) -> [(key: Int64, snapshot: DetectionEngine.DeviceSnapshot)] {
        var random = SplitMix64(seed: seed)
        var key: Int64 = 0
        return (0..<count).map { n in
            key += Int64(1 + random.next() % 3)  // gaps: devices forgotten
            var snapshot = DeviceRowTests.randomSnapshot(DeviceID(n % 5 == 0 ? "dév-\(n)" : "d\(n)"), &random)
            // Every seventh inside no fence.
            snapshot.memberships = n % 7 == 3 ? [] : randomMemberships(&random, time: snapshot.lastTime)
            return (key, snapshot)
        }
    }

    /// A version-9 file written with the version-9 schema SQL: `devices` with their keys, one presence
    /// row per membership, option state and instant visits, and an event.
    static func writeVersion9(_ path: String, devices: [(key: Int64, snapshot: DetectionEngine.DeviceSnapshot)],
                              extraSQL: String = "") throws {
        let db = try Database(path: path)
        for migration in Schema.migrations[0..<8] { try db.execute(migration) }
        try db.execute(Schema.deviceStateSwap)  // migration 8's last part (no device rows to fill)
        try db.execute(Schema.migrations[8])
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 9;
            INSERT INTO meta VALUES ('processed_updates', 6), ('accepted_sequence', 6), ('arrivals', 6);
            \(extraSQL)
            """)
        let device = try db.statement("INSERT INTO device (key, id, state, instant_visits) VALUES (?, ?, ?, ?)")
        let presence = try db.statement("""
            INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled, ordinal) VALUES (?, ?, ?, ?, ?, ?)
            """)
        let option = try db.statement("INSERT INTO device_option (device, state) VALUES (?, ?)")
        for (key, snapshot) in devices {
            device.bind(key, at: 1)
            device.bind(snapshot.device.rawValue, at: 2)
            device.bind(DeviceStateCodec.encode(snapshot), at: 3)
            device.bind(snapshot.instantVisits.isEmpty ? nil : InstantVisitCodec.encode(snapshot.instantVisits), at: 4)
            try device.execute()
            for m in snapshot.memberships {
                presence.bind(key, at: 1)
                presence.bind(m.fence.rawValue, at: 2)
                presence.bind(m.entryTime, at: 3)
                presence.bind(Int64(bitPattern: m.visitSequence), at: 4)
                presence.bind(Int64(m.hasDwelled ? 1 : 0), at: 5)
                presence.bind(m.ordinal.map(Int64.init), at: 6)
                try presence.execute()
            }
            if snapshot.options != nil || snapshot.stream != nil {
                option.bind(key, at: 1)
                option.bind(OptionStateCodec.encode(options: snapshot.options, stream: snapshot.stream), at: 2)
                try option.execute()
            }
        }
        db.close()
    }

    /// `snapshots` with their memberships in one order (by the fence id's bytes), for comparing sets of
    /// memberships: canonically equivalent ids are equal `String`s, so sorting by `String` leaves their
    /// order to the sort.
    static func normalized(_ snapshots: [DetectionEngine.DeviceSnapshot]) -> [DetectionEngine.DeviceSnapshot] {
        snapshots.map { snapshot in
            var s = snapshot
            s.memberships.sort { Array($0.fence.rawValue.utf8).lexicographicallyPrecedes(Array($1.fence.rawValue.utf8)) }
            return s
        }.sorted { $0.device.rawValue < $1.device.rawValue }
    }

    @Test("a version-9 file migrates: every device loads the memberships its rows held, one row a device; commits and loads go on",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func migratesVersion9(mode: SQLiteGeofencingStore.LockingMode) throws {
        let devices = Self.randomDevices(seed: mode == .shared ? 10 : 100)
        let inside = devices.filter { !$0.snapshot.memberships.isEmpty }
        #expect(inside.count > 30 && inside.count < devices.count)
        #expect(devices.contains { $0.snapshot.memberships.count >= 4 })
        let folder = TemporaryFolder()
        let path = folder.path("v9.sqlite")
        try Self.writeVersion9(path, devices: devices)

        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        let loaded = try store.load()
        #expect(Self.normalized(loaded.devices) == Self.normalized(devices.map(\.snapshot)))
        // The loaded order is the version-9 loader's: memberships by fence.
        for snapshot in loaded.devices {
            #expect(zip(snapshot.memberships, snapshot.memberships.dropFirst()).allSatisfy { !($1.fence < $0.fence) })
        }
        // Commits go on: half the devices change presence, some leave every fence, a new one arrives.
        var random = SplitMix64(seed: 7)
        var expected = Dictionary(uniqueKeysWithValues: devices.map { ($0.snapshot.device, $0.snapshot) })
        var changes = StoreChanges()
        for (_, snapshot) in devices where random.next() % 2 == 0 {
            var next = snapshot
            next.lastTime += 10
            next.memberships = random.next() % 3 == 0 ? [] : Self.randomMemberships(&random, time: next.lastTime)
            changes.devices.append(DeviceChange(snapshot: next, presenceChanged: true))
            expected[next.device] = next
        }
        let newcomer = DetectionEngine.DeviceSnapshot(device: "newcomer", lastTime: 5, lastCoordinate: Coordinate(latitude: 1, longitude: 2),
                                                      updateCount: 1, memberships: [.init(fence: "park", entryTime: 5, visitSequence: 1, hasDwelled: false)])
        changes.devices.append(DeviceChange(snapshot: newcomer, presenceChanged: true))
        expected["newcomer"] = newcomer
        try store.commit(changes)
        store.close()
        let reopened = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        #expect(Self.normalized(try reopened.load().devices) == Self.normalized(Array(expected.values)))
        reopened.close()

        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.integer("PRAGMA user_version") == Schema.version && Schema.version == 10)
        #expect(try db.integer("SELECT count(*) FROM presence") == Int64(expected.values.filter { !$0.memberships.isEmpty }.count))
        #expect(try db.integer("SELECT count(*) FROM presence WHERE typeof(memberships) <> 'blob'") == 0)
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'presence_v10'") == 0)
        #expect(try db.text("PRAGMA integrity_check") == "ok")
    }

    @Test("a migration that fails leaves the version-9 file as it was: a table in the way, an ordinal out of range (named)",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func failedMigrationLeavesTheFile(mode: SQLiteGeofencingStore.LockingMode) throws {
        let devices = Self.randomDevices(seed: 19)
        let rows = Int64(devices.map(\.snapshot.memberships.count).reduce(0, +))
        let folder = TemporaryFolder()
        let blocked = folder.path("blocked.sqlite")
        try Self.writeVersion9(blocked, devices: devices, extraSQL: "CREATE TABLE presence_v10 (x);")
        #expect(throws: (any Error).self) { _ = try SQLiteGeofencingStore(path: blocked, lockingMode: mode).load() }
        let damaged = folder.path("damaged.sqlite")
        let victim = devices.first { !$0.snapshot.memberships.isEmpty }!
        try Self.writeVersion9(damaged, devices: devices)
        let raw = try Database(path: damaged)
        try raw.execute("UPDATE presence SET ordinal = 5000000000 WHERE device = \(victim.key)")
        raw.close()
        do {
            _ = try SQLiteGeofencingStore(path: damaged, lockingMode: mode).load()
            Issue.record("expected the migration to refuse the ordinal")
        } catch let error as GeofencingError {
            #expect(error.code == .incompatibleStorage)
            #expect(error.message.contains("device key \(victim.key)") && error.message.contains("5000000000"), "\(error.message)")
        }
        for path in [blocked, damaged] {
            let db = try Database(path: path)
            defer { db.close() }
            #expect(try db.integer("PRAGMA user_version") == 9)
            #expect(try db.integer("SELECT count(*) FROM presence") == rows)
            #expect(try db.integer("SELECT count(*) FROM pragma_table_info('presence') WHERE name = 'fence'") == 1)
        }
    }

    @Test("a presence row that cannot be decoded is refused naming its device, at load and when a fence is removed")
    func damagedRows() throws {
        let devices = Self.randomDevices(seed: 29, count: 12)
        let victim = devices.first { !$0.snapshot.memberships.isEmpty }!
        let folder = TemporaryFolder()
        var good = PresenceCodec.encode(victim.snapshot.memberships)
        var invalidUTF8 = PresenceCodec.encode([.init(fence: "ab", entryTime: 1, visitSequence: 1, hasDwelled: false)])
        invalidUTF8[3] = 0xFF
        good.append(0)
        let damages: [(bytes: [UInt8], words: String)] = [
            ([2, 0, 0, 0, 0], "format 2"),
            (Array(PresenceCodec.encode(victim.snapshot.memberships).dropLast()), "truncated"),
            (good, "unexpected bytes"),
            ([1, 0xFF, 0xFF, 0, 0], "exceeds"),
            (invalidUTF8, "UTF-8"),
            (Array(PresenceCodec.encode([.init(fence: "z", entryTime: 1, visitSequence: 1, ordinal: nil, hasDwelled: false)]).dropLast()) + [4],
             "flags 4"),
            ([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0] + Array(repeating: 0xFF, count: 10) + [0x01, 0], "beyond 64 bits"),
            ([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x80, 0x80, 0x80, 0x80, 0x10], "beyond 32 bits"),
        ]
        for (n, damage) in damages.enumerated() {
            let path = folder.path("damaged\(n).sqlite")
            try Self.writeVersion9(path, devices: devices)
            try SQLiteGeofencingStore(path: path).close()  // migrates
            let db = try Database(path: path)
            let update = try db.statement("UPDATE presence SET memberships = ? WHERE device = ?")
            update.bind(damage.bytes, at: 1)
            update.bind(victim.key, at: 2)
            try update.execute()
            db.close()
            let store = try SQLiteGeofencingStore(path: path)
            defer { store.close() }
            do {
                _ = try store.load()
                Issue.record("expected load to refuse \(damage.words)")
            } catch let error as GeofencingError {
                #expect(error.code == .incompatibleStorage)
                #expect(error.message.contains("presence of device \(victim.snapshot.device)") && error.message.contains(damage.words), "\(error.message)")
            }
            var changes = StoreChanges()
            changes.fences = [.remove("park")]
            do {
                try store.commit(changes)
                Issue.record("expected the fence removal to refuse \(damage.words)")
            } catch let error as GeofencingError {
                #expect(error.code == .incompatibleStorage)
                #expect(error.message.contains("presence of device \(victim.snapshot.device)") && error.message.contains(damage.words), "\(error.message)")
            }
        }
    }

    @Test("random commits that remove fences take their memberships out of every device, fence ids compared byte for byte as version 9's `DELETE … WHERE fence = ?` did",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func fenceRemovals(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: mode == .shared ? 2_010 : 1_020)
        let folder = TemporaryFolder()
        let store = try SQLiteGeofencingStore(path: folder.path("fences.sqlite"), lockingMode: mode)
        defer { store.close() }
        let ids = (0..<60).map { DeviceID("d\($0)") }
        var expected: [DeviceID: DetectionEngine.DeviceSnapshot] = [:]
        for round in 0..<25 {
            var changes = StoreChanges()
            if round > 0, random.next() % 2 == 0 {
                // Remove one to three fences (`removeAll` now and then).
                if random.next() % 8 == 0 {
                    changes.fences = [.removeAll]
                    for id in expected.keys { expected[id]!.memberships = [] }
                } else {
                    let removed = (0..<Int(1 + random.next() % 3)).map { _ in Self.fences[Int(random.next() % UInt64(Self.fences.count))] }
                    changes.fences = removed.map { .remove($0) }
                    let bytes = Set(removed.map { Array($0.rawValue.utf8) })
                    for id in expected.keys { expected[id]!.memberships.removeAll { bytes.contains(Array($0.fence.rawValue.utf8)) } }
                }
            }
            var chosen = Set<DeviceID>()
            for _ in 0..<Int(random.next() % 45) { chosen.insert(ids[Int(random.next() % 60)]) }
            for id in chosen.sorted() {
                var snapshot = DeviceRowTests.randomSnapshot(id, &random)
                snapshot.memberships = random.next() % 4 == 0 ? [] : Self.randomMemberships(&random, time: snapshot.lastTime)
                changes.devices.append(DeviceChange(snapshot: snapshot, presenceChanged: true))
                expected[id] = snapshot
            }
            try store.commit(changes)
            let loaded = try store.load()
            #expect(Self.normalized(loaded.devices) == Self.normalized(Array(expected.values)), "round \(round)")
        }
    }

    @Test("a device listed twice in one commit ends with its last change's presence, as in the in-memory store")
    func deviceListedTwice() throws {
        let folder = TemporaryFolder()
        let store = try SQLiteGeofencingStore(path: folder.path("twice.sqlite"))
        defer { store.close() }
        let memory = InMemoryGeofencingStore()
        for devices in [[DeviceKeyTests.device("a", time: 1, fences: ["park"]), DeviceKeyTests.device("a", time: 2, fences: [])],
                        [DeviceKeyTests.device("a", time: 3, fences: []), DeviceKeyTests.device("b", time: 3, fences: ["zoo"]),
                         DeviceKeyTests.device("a", time: 4, fences: ["zoo", "park"])],
                        [DeviceKeyTests.device("b", time: 5, fences: ["park"]), DeviceKeyTests.device("b", time: 6, fences: [])]] {
            var changes = StoreChanges()
            changes.devices = devices
            try store.commit(changes)
            try memory.commit(changes)
            #expect(Self.normalized(try store.load().devices) == Self.normalized(try memory.load().devices))
        }
        #expect(try store.load().devices.map { $0.memberships.map(\.fence) } == [["park", "zoo"], []])
    }

    @Test("the encoding: fixed bytes for one membership, every field round-trips bit for bit")
    func codec() throws {
        let one = DetectionEngine.MembershipSnapshot(fence: "é", entryTime: 1.5, visitSequence: 0x0102, ordinal: 3, hasDwelled: true)
        // Format, count 1, id length 2, "é", 1.5's bits, visit sequence 258 as a varint, flags, ordinal 3.
        #expect(PresenceCodec.encode([one]) == [1, 1, 2, 0xC3, 0xA9, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x82, 0x02, 3, 3])
        #expect(PresenceCodec.encode([]) == [1, 0])
        #expect(try PresenceCodec.decode([1, 0]).isEmpty)
        for value: UInt64 in [0, 1, 127, 128, 16_383, 16_384, 1 << 32, UInt64.max >> 1, UInt64.max] {
            let m = DetectionEngine.MembershipSnapshot(fence: "", entryTime: 0, visitSequence: value, ordinal: nil, hasDwelled: false)
            let bytes = PresenceCodec.encode([m])
            #expect(bytes.count == 2 + 1 + 8 + PresenceCodec.varintSize(value) + 1)
            #expect(PresenceCodec.varintSize(value) == max(1, (64 - value.leadingZeroBitCount + 6) / 7))
            #expect(try PresenceCodec.decode(bytes) == [m])
        }
        var random = SplitMix64(seed: 5)
        for _ in 0..<200 {
            let memberships = Self.randomMemberships(&random, time: Double(random.next() % 1_000_000) / 3)
            let decoded = try PresenceCodec.decode(PresenceCodec.encode(memberships))
            #expect(decoded == memberships)
            #expect(decoded.map(\.entryTime.bitPattern) == memberships.map(\.entryTime.bitPattern))
            #expect(decoded.map { Array($0.fence.rawValue.utf8) } == memberships.map { Array($0.fence.rawValue.utf8) })
        }
    }
}

private extension String {
    var fenceID: FenceID { FenceID(self) }
}
