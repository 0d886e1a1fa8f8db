import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

/// Known devices' state is written in place in key order, each row's id check read first; presence rows
/// up to 32 per statement; a remembered key that names another device's row or no row is caught and the
/// commit starts again with keys read from the file.
@Suite("SQLite store: device rows")
struct DeviceRowTests {
    static let fences: [FenceID] = ["park", "zoo", "é-garden"]

    static func randomSnapshot(_ id: DeviceID, _ random: inout SplitMix64) -> DetectionEngine.DeviceSnapshot {
        let time = 1_700_000_000 + Double(random.next() % 100_000) / 4
        let memberships = fences.filter { _ in random.next() % 3 == 0 }.sorted().map { fence in
            DetectionEngine.MembershipSnapshot(fence: fence, entryTime: time - Double(random.next() % 100),
                                               visitSequence: random.next() % 9, ordinal: random.next() % 4 == 0 ? nil : UInt32(random.next() % 3),
                                               hasDwelled: random.next() % 2 == 0)
        }
        let instant = random.next() % 5 == 0
            ? [DetectionEngine.InstantVisitSnapshot(fence: fences[Int(random.next() % 3)], entryTime: time - 1, ordinal: UInt32(random.next() % 2))]
            : []
        return DetectionEngine.DeviceSnapshot(
            device: id, lastTime: time, lastCoordinate: Coordinate(latitude: 48 + Double(random.next() % 1000) / 1e4, longitude: -1.5),
            updateCount: random.next() % 10_000, memberships: memberships, instantVisits: instant,
            options: random.next() % 7 == 0 ? DeviceKeyTests.options : nil)
    }

    @Test("random commits of up to 70 devices (new, known, forgotten, reopened; presence rewritten or by difference): the SQLite store loads what the in-memory store loads",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func matchesTheInMemoryStore(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: mode == .shared ? 1_816 : 6_181)
        let ids = (0..<80).map { DeviceID($0 % 5 == 0 ? "dév-\($0)" : "d\($0)") }
        let folder = TemporaryFolder()
        let path = folder.path("devices.sqlite")
        var store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        defer { store.close() }
        let memory = InMemoryGeofencingStore()
        var batches = Set<Int>()
        var committed: [DeviceID: [DetectionEngine.MembershipSnapshot]] = [:]  // the presence rows stored
        for round in 0..<60 {
            var changes = StoreChanges()
            if round > 5, random.next() % 4 == 0 {
                changes.forgottenDevices = (0..<Int(random.next() % 3 + 1)).map { _ in ids[Int(random.next() % 80)] }
            }
            var chosen = Set<DeviceID>()
            // Up to 70: statements of 32 rows, of eight and of one, for device and presence rows.
            for _ in 0..<Int(random.next() % 71) { chosen.insert(ids[Int(random.next() % 80)]) }
            for device in changes.forgottenDevices { committed[device] = nil }
            // Half of the changes name the rows stored now (only the differences are written), the
            // others not (the device's rows are deleted and written again).
            changes.devices = chosen.sorted().shuffled(using: &random).map {
                DeviceChange(snapshot: Self.randomSnapshot($0, &random), presenceChanged: true,
                             storedMemberships: random.next() % 2 == 0 ? committed[$0, default: []] : nil)
            }
            for change in changes.devices { committed[change.snapshot.device] = change.snapshot.memberships }
            let count = changes.devices.count
            batches.insert(count >= 32 ? 32 : count >= 8 ? 8 : 1)
            guard !changes.isEmpty else { continue }
            try store.commit(changes)
            try memory.commit(changes)
            switch random.next() % 6 {
            case 0:  // reopened: the next commit finds devices by id
                store.close()
                store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
            case 1, 2:  // loaded: the next commits trust the remembered keys
                #expect(try store.load().devices == memory.load().devices, "round \(round)")
            default: break
            }
        }
        #expect(batches == [1, 8, 32], "commits with statements of one row only, of eight and of 32")
        #expect(try store.load().devices == memory.load().devices)
    }

    @Test("random commits with device numbers — a service's own, another's, none — forgotten and reopened: the SQLite store loads what the in-memory store loads",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func deviceNumbers(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: mode == .shared ? 1_818 : 8_181)
        let ids = (0..<80).map { DeviceID($0 % 5 == 0 ? "dév-\($0)" : "d\($0)") }
        let folder = TemporaryFolder()
        let path = folder.path("numbers.sqlite")
        var store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        defer { store.close() }
        let memory = InMemoryGeofencingStore()
        var numbering = Array(0..<80)
        var usedNumbers = false
        for round in 0..<60 {
            // Every ten rounds another numbering: a service's dense one, one that numbers the ids
            // otherwise (a restarted or another service: each number now names another device), none.
            if round % 10 == 0 { numbering.shuffle(using: &random) }
            let numbered = round % 30 < 20
            var changes = StoreChanges()
            if round > 5, random.next() % 4 == 0 {
                changes.forgottenDevices = (0..<Int(random.next() % 3 + 1)).map { _ in ids[Int(random.next() % 80)] }
            }
            var chosen = Set<Int>()
            for _ in 0..<Int(random.next() % 71) { chosen.insert(Int(random.next() % 80)) }
            changes.devices = chosen.sorted().shuffled(using: &random).map { i in
                var change = DeviceChange(snapshot: Self.randomSnapshot(ids[i], &random), presenceChanged: true)
                if numbered { change.deviceNumber = Int32(numbering[i]) }
                return change
            }
            guard !changes.isEmpty else { continue }
            try store.commit(changes)
            try memory.commit(changes)
            switch random.next() % 8 {
            case 0:
                store.close()
                store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
            case 1:
                #expect(try store.load().devices == memory.load().devices, "round \(round)")
            default:
                // What the numbers remember is what the file holds: each entry's key is its id's row.
                let (entries, rows) = try store.owner.withConnection("testing") { connection in
                    let rows = try connection.db.statement("SELECT key, id FROM device")
                    var file: [Int64: String] = [:]
                    while try rows.step() { file[rows.int64(0)] = rows.string(1) }
                    return (connection.keysByNumber.compactMap { $0 }, file)
                }
                #expect(entries.allSatisfy { rows[$0.key] == $0.device.rawValue }, "round \(round)")
                if numbered { usedNumbers = usedNumbers || !entries.isEmpty }
            }
        }
        #expect(usedNumbers, "keys were remembered by number")
        #expect(try store.load().devices == memory.load().devices)
        let numbers = try store.owner.withConnection("testing") { connection in connection.keysByNumber.compactMap { $0 }.count }
        #expect(numbers == 0, "the load forgot the numbers")
    }

    @Test("remembered keys that name another device's row or no row: every device's state lands in its own row",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func staleKeys(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        defer { store.close() }
        let ids = (0..<44).map { DeviceID("d\($0)") }
        try DeviceKeyTests.commit(store, ids.map { DeviceKeyTests.device($0, time: 1) })
        // Read through the store's own connection (an exclusive store keeps the file locked).
        func keys() throws -> [String] {
            try store.owner.withConnection("testing") { connection in
                let rows = try connection.db.statement("SELECT key, id FROM device ORDER BY key")
                var keys: [String] = []
                while try rows.step() { keys.append("\(rows.int64(0)):\(rows.string(1))") }
                return keys
            }
        }
        // Each case alone (the commit that catches one starts again with every key read from the file,
        // which would mend the others too): the remembered keys made wrong after a load, then a commit of
        // all 44 devices (their presence in one statement of 32 rows, one of eight, four of one) and the
        // ghost when it is named.
        let cases: [(wrong: [DeviceID: Int64], ghost: Bool)] = [
            (["d0": 2, "d1": 1], false),  // rows of other devices: their id checks differ
            (["d32": 34, "d33": 33], false),  // the same further on
            (["d42": 44, "d43": 43], false),  // the same at the end
            (["d2": 99], false),  // a free key, the id has a row: no row to open
            (["ghost": 50], true),  // a free key, the id has no row: no row to open either
        ]
        var time = 10.0
        var expected = ids
        for (wrong, ghost) in cases {
            _ = try store.load()  // every key remembered, the memory complete
            try store.owner.withConnection("testing") { connection in
                for (device, key) in wrong { connection.deviceKeys[device] = key }
            }
            time += 100
            let devices = expected.enumerated().map { DeviceKeyTests.device($1, time: time + Double($0), fences: ["park"]) }
            if ghost { expected.append("ghost") }
            try DeviceKeyTests.commit(store, devices + (ghost ? [DeviceKeyTests.device("ghost", time: time + 60)] : []))
            #expect(try keys() == expected.enumerated().map { "\($0 + 1):\($1)" }, "\(wrong)")
            let state = try store.load()
            #expect(state.devices.map(\.device) == expected)
            #expect(state.devices.prefix(44).map(\.lastTime) == (0..<44).map { time + Double($0) }, "\(wrong)")
            #expect(state.devices.prefix(44).allSatisfy { $0.memberships.map(\.fence) == ["park"] }, "\(wrong)")
        }
    }
}
