import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing
import PerimeterSQLite

/// The event log's rows, whose texts a commit binds from one buffer without a copy (``TextParameters``)
/// and whose engine-made ids it writes as 16 bytes: every row holds exactly the texts the event's
/// `String` properties give (what a commit stored when it bound each `String`), the ids in the form
/// `EventRowCodec` gives them, and reads back equal.
@Suite("SQLite store: event log rows")
struct EventLogTests {
    /// Texts that exercise the binding: empty, one byte, non-ASCII, longer than a small string.
    static let texts = ["", "a", "zoo", "é✓ 公园", "a fence with a rather long name, past 15 bytes", "Ünïcödé\u{1F600}"]

    /// An id: 32 lower-case hex digits (kept as bits by the engine's event) or other text (kept as text).
    static func randomID(_ random: inout SplitMix64) -> String {
        let hex = Array("0123456789abcdef")
        switch random.next() % 5 {
        case 0, 1, 2: return String((0..<32).map { _ in hex[Int(random.next() % 16)] })
        case 3: return String((0..<32).map { _ in hex[Int(random.next() % 16)] }).uppercased()
        default: return texts[Int(random.next() % UInt64(texts.count))]
        }
    }

    static func randomText(_ random: inout SplitMix64) -> String? {
        random.next() % 3 == 0 ? nil : texts[Int(random.next() % UInt64(texts.count))]
    }

    static func randomProperties(_ random: inout SplitMix64) -> [String: JSONValue] {
        guard random.next() % 3 != 0 else { return [:] }
        var properties: [String: JSONValue] = [:]
        for k in 0..<Int(random.next() % 4 + 1) {
            let value: JSONValue = switch random.next() % 4 {
            case 0: .string(texts[Int(random.next() % UInt64(texts.count))])
            case 1: .integer(Int64(bitPattern: random.next() % 1000))
            case 2: .bool(random.next() % 2 == 0)
            default: .object(["n\(k)": .array([.integer(Int64(k)), .null])])
            }
            properties["p\(k)-\(texts[k % texts.count])"] = value
        }
        return properties
    }

    static func randomEvent(_ sequence: Int64, _ random: inout SplitMix64) -> GeofencingEvent {
        let kinds = GeofenceEventKind.allCases, reasons = ExitReason.allCases
        let time = 700_000_000 + Double(sequence) + Double(random.next() % 1000) / 8
        let event = GeofenceEvent(
            id: randomID(&random), visitID: randomID(&random), kind: kinds[Int(random.next() % UInt64(kinds.count))],
            fence: FenceID(texts[Int(random.next() % UInt64(texts.count))] + "-f"),
            device: DeviceID("d\(random.next() % 50)" + (random.next() % 4 == 0 ? "-é" : "")),
            time: Date(timeIntervalSinceReferenceDate: time), coordinate: Coordinate(latitude: 48.5, longitude: -2.25),
            timeInside: random.next() % 2 == 0 ? nil : 12.5, observedAt: Date(timeIntervalSinceReferenceDate: time - 1),
            reason: reasons[Int(random.next() % UInt64(reasons.count))])
        return GeofencingEvent(sequence: sequence, event: event, fenceName: randomText(&random), group: randomText(&random),
                               properties: randomProperties(&random), message: randomText(&random))
    }

    @Test("random events, in commits of random sizes: each row's texts are the events' Strings, and the log reads back equal",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func rowsHoldTheEventsTexts(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: mode == .shared ? 16 : 61)
        let folder = TemporaryFolder()
        let path = folder.path("events.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        var logged: [GeofencingEvent] = []
        while logged.count < 600 {
            let count = Int(random.next() % 80)  // statements of 32 rows, of eight and of one
            let events = (0..<count).map { Self.randomEvent(Int64(logged.count + $0 + 1), &random) }
            var changes = StoreChanges()
            changes.events = events
            changes.processedUpdates = UInt64(logged.count + count)
            if !events.isEmpty { try store.commit(changes) }
            logged += events
        }
        #expect(Set(logged.map { $0.event.id.count == 32 }).count == 2, "ids of both forms")
        #expect(logged.contains { $0.fenceName == "" } && logged.contains { $0.message == nil })
        #expect(try store.events(after: 0, limit: 10_000) == logged)
        #expect(try store.events(after: 250, limit: 7) == Array(logged[250..<257]))
        store.close()

        // The rows as SQLite holds them (schema 9, `EventRowCodec`): an id of 32 lower-case hex digits
        // as its 16 bytes (their hex is the id), any other id as its text; kind and reason as their
        // codes; the other texts equal to the Strings, NULL for nil.
        let db = try Database(path: path)
        defer { db.close() }
        let rows = try db.statement("""
            SELECT sequence, fence, device, fence_name, grp, properties, message,
                typeof(fence), typeof(device), typeof(fence_name), typeof(grp), typeof(properties), typeof(message),
                CASE typeof(id) WHEN 'blob' THEN lower(hex(id)) ELSE id END, typeof(id), length(id),
                CASE typeof(visit_id) WHEN 'blob' THEN lower(hex(visit_id)) ELSE visit_id END, typeof(visit_id), length(visit_id),
                kind, typeof(kind), reason, typeof(reason)
            FROM event ORDER BY sequence
            """)
        let writer = JSONWriter()
        let codes: [GeofenceEventKind: Int64] = [.entry: 0, .dwell: 1, .exit: 2, .cross: 3, .inside: 4]
        let reasonCodes: [ExitReason: Int64] = [.left: 0, .timeout: 1, .reset: 2]
        var count = 0
        var blobs = 0
        while try rows.step() {
            let logged = logged[count]
            let event = logged.event
            count += 1
            let expected: [String?] = [event.fence.rawValue, event.device.rawValue, logged.fenceName, logged.group,
                                       logged.properties.isEmpty ? nil : writer.string(.object(logged.properties)), logged.message]
            #expect(rows.int64(0) == logged.sequence)
            for (k, text) in expected.enumerated() {
                let column = Int32(k + 1)
                #expect(rows.optionalString(column) == text, "event \(logged.sequence), column \(column)")
                #expect(rows.string(column + 6) == (text == nil ? "null" : "text"), "event \(logged.sequence), column \(column)")
            }
            for (id, column) in [(event.id, Int32(13)), (event.visitID, 16)] {
                let engineForm = id.utf8.count == 32 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
                #expect(rows.string(column) == id, "event \(logged.sequence), column \(column)")
                #expect(rows.string(column + 1) == (engineForm ? "blob" : "text"), "event \(logged.sequence), column \(column)")
                if engineForm {
                    #expect(rows.int64(column + 2) == 16)
                    blobs += 1
                }
            }
            #expect(rows.string(20) == "integer" && rows.int64(19) == codes[event.kind])
            #expect(rows.string(22) == "integer" && rows.int64(21) == reasonCodes[event.reason])
        }
        #expect(blobs > 0 && blobs < 2 * logged.count, "ids of both forms")
        #expect(count == logged.count)
    }

    @Test("executeLeavingBound: each run stores the texts bound for it; reset() unbinds them")
    func leavingBound() throws {
        let folder = TemporaryFolder()
        let db = try Database(path: folder.path("bound.sqlite"))
        defer { db.close() }
        try db.execute("CREATE TABLE row (n INTEGER, a, b)")
        let insert = try db.statement("INSERT INTO row VALUES (?1, ?2, ?3)")
        var texts = TextParameters()
        let rows: [(String?, [UInt8])] = [("x", [1]), (nil, []), ("é✓ 公园", Array(0...40)), ("", [2, 3])]
        for (n, row) in rows.enumerated() {
            texts.removeAll()
            insert.bind(Int64(n), at: 1)
            texts.append(row.0, at: 2)
            texts.appendBlob(at: 3) { $0.append(contentsOf: row.1) }
            try insert.executeLeavingBound(texts)
        }
        insert.reset()
        try insert.execute()
        let select = try db.statement("SELECT n, a, b, typeof(a), typeof(b) FROM row ORDER BY rowid")
        for (n, row) in rows.enumerated() {
            #expect(try select.step())
            #expect(select.int64(0) == Int64(n) && select.optionalString(1) == row.0 && select.blob(2) == row.1)
            #expect(select.string(3) == (row.0 == nil ? "null" : "text") && select.string(4) == "blob")
        }
        #expect(try select.step())
        #expect(select.isNull(0) && select.isNull(1) && select.isNull(2))
        #expect(try !select.step())
    }

    @Test("TextParameters: BLOBs bind among texts, an empty BLOB stays a BLOB, and nothing stays bound")
    func blobParameters() throws {
        let folder = TemporaryFolder()
        let db = try Database(path: folder.path("blobs.sqlite"))
        defer { db.close() }
        try db.execute("CREATE TABLE row (n INTEGER, a, b, c)")
        let insert = try db.statement("INSERT INTO row VALUES (?1, ?2, ?3, ?4)")
        var texts = TextParameters()
        let rows: [([UInt8], String?, [UInt8]?)] = [([0, 1, 255], "x", []), ([], nil, Array(0...15)), ([7], "é", nil)]
        for (n, row) in rows.enumerated() {
            texts.removeAll()
            insert.bind(Int64(n), at: 1)
            texts.appendBlob(at: 2) { $0.append(contentsOf: row.0) }
            texts.append(row.1, at: 3)
            if let c = row.2 { texts.appendBlob(at: 4) { $0.append(contentsOf: c) } } else { texts.append(nil, at: 4) }
            try insert.execute(binding: texts)
        }
        try insert.execute()
        let select = try db.statement("SELECT n, a, b, c, typeof(a), typeof(b), typeof(c) FROM row ORDER BY rowid")
        for (n, row) in rows.enumerated() {
            #expect(try select.step())
            #expect(select.int64(0) == Int64(n))
            #expect(select.blob(1) == row.0 && select.string(4) == "blob" && select.isBlob(1))
            #expect(select.optionalString(2) == row.1 && select.string(5) == (row.1 == nil ? "null" : "text"))
            #expect(select.blob(3) == (row.2 ?? []) && select.string(6) == (row.2 == nil ? "null" : "blob"))
        }
        #expect(try select.step())
        #expect(select.int64(0) == 2 && select.isNull(1) && select.isNull(2) && select.isNull(3))
        #expect(try !select.step())
    }

    @Test("TextParameters: texts and NULLs bind at their indices for one step, empty texts stay texts, and nothing stays bound")
    func textParameters() throws {
        let folder = TemporaryFolder()
        let db = try Database(path: folder.path("texts.sqlite"))
        defer { db.close() }
        try db.execute("CREATE TABLE row (n INTEGER, a, b, c)")
        let insert = try db.statement("INSERT INTO row VALUES (?1, ?2, ?3, ?4)")
        var texts = TextParameters()
        let rows: [[String?]] = [["x", "", nil], ["", "", ""], [nil, "é✓ 公园", Self.texts[4]], ["", nil, nil]]
        for (n, row) in rows.enumerated() {
            texts.removeAll()
            insert.bind(Int64(n), at: 1)
            // In another order than the columns', one through `append(at:_:)`.
            texts.append(row[2], at: 4)
            texts.append(row[0], at: 2)
            if let b = row[1] { texts.append(at: 3) { $0.append(contentsOf: b.utf8) } } else { texts.append(nil, at: 3) }
            try insert.execute(binding: texts)
        }
        // A step without new bindings: the texts were unbound (NULL), the integer is still bound.
        try insert.execute()
        let select = try db.statement("SELECT n, a, b, c, typeof(a), typeof(b), typeof(c) FROM row ORDER BY rowid")
        for (n, row) in rows.enumerated() {
            #expect(try select.step())
            #expect(select.int64(0) == Int64(n))
            for k in 0..<3 {
                #expect(select.optionalString(Int32(k + 1)) == row[k], "row \(n), column \(k)")
                #expect(select.string(Int32(k + 4)) == (row[k] == nil ? "null" : "text"), "row \(n), column \(k)")
            }
        }
        #expect(try select.step())
        #expect(select.int64(0) == 3 && select.isNull(1) && select.isNull(2) && select.isNull(3))
        #expect(try !select.step())
    }
}
