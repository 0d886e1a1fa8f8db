import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterSQLite

@Suite("SQLite store: schema migration and option state")
struct MigrationTests {
    /// A version-1 file as the previous release wrote it: one fence, one device inside it, one event.
    static func writeVersion1(_ path: String) throws {
        let db = try Database(path: path)
        try db.execute(Schema.migrations[0])
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 1;
            INSERT INTO fence VALUES ('park', 1, '{"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[2,48]},"properties":{"perimeter:radius":500,"perimeter:dwell":60}}', NULL, NULL, 60, NULL);
            INSERT INTO device (id, last_time, latitude, longitude, update_count) VALUES ('phone', 1000, 48, 2, 1);
            INSERT INTO presence VALUES ('phone', 'park', 1000, 0, 0);
            INSERT INTO event VALUES (1, 'e1', 'v1', 'entry', 'park', 'phone', -978306200, 48, 2, NULL, -978306200, 'left');
            INSERT INTO meta VALUES ('processed_updates', 1);
            """)
        db.close()
    }

    @Test("a version-1 file is migrated in place, keeps its data, and then holds option state")
    func migrateFromVersion1() throws {
        let folder = TemporaryFolder()
        let path = folder.path("v1.sqlite")
        try Self.writeVersion1(path)

        let store = try SQLiteGeofencingStore(path: path)
        let state = try store.load()
        #expect(state.fences.map(\.id) == ["park"])
        #expect(state.fences.first?.additionSequence == nil)
        #expect(state.devices.map(\.device) == ["phone"])
        #expect(state.devices.first?.memberships.map(\.fence) == ["park"])
        #expect(state.devices.first?.options == nil)
        #expect(state.processedUpdates == 1)
        #expect(state.acceptedSequence == 0)

        // The old state continues under options: no entry re-fires, the dwell falls due as before.
        let options = GeofencingOptions(detectionOptions: DetectionOptions(dwellEvery: 30))
        var service = GeofencingService(store: store)
        try service.configure(options)
        #expect(try service.process(LocationUpdate(device: "phone", time: Date(timeIntervalSince1970: 1030),
                                                   latitude: 48, longitude: 2)).isEmpty)
        #expect(try service.advance(to: Date(timeIntervalSince1970: 1090)).map(\.event.kind) == [.dwell, .dwell])
        store.close()

        let reopened = try SQLiteGeofencingStore(path: path)
        let db = try Database(path: path)
        #expect(try db.integer("PRAGMA user_version") == 2)
        #expect(try db.integer("SELECT count(*) FROM device_option") == 1)
        db.close()
        service = GeofencingService(store: reopened)
        try service.configure(options)
        #expect(try service.advance(to: Date(timeIntervalSince1970: 1120)).map(\.event.time) == [Date(timeIntervalSince1970: 1120)],
                "the repeated-dwell count survived the restart")
        #expect(try service.loggedEvents(after: 0).map(\.sequence) == [1, 2, 3, 4])
        reopened.close()
    }

    @Test("damaged option state is refused as incompatible storage, naming the device")
    func damagedOptionState() throws {
        let folder = TemporaryFolder()
        let path = folder.path("bad.sqlite")
        try Self.writeVersion1(path)
        try SQLiteGeofencingStore(path: path).close()
        let db = try Database(path: path)
        try db.execute("INSERT INTO device_option VALUES ('phone', x'0103ffff')")
        db.close()
        let store = try SQLiteGeofencingStore(path: path)
        defer { store.close() }
        do {
            _ = try store.load()
            Issue.record("expected an error")
        } catch let error as GeofencingError {
            #expect(error.code == .incompatibleStorage)
            #expect(error.message.contains("phone"))
        }
    }

    @Test("option state round-trips bit for bit; every truncation is an error, never a crash", arguments: [1, 2, 3] as [UInt64])
    func codec(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        func number() -> Double {
            [0.0, -0.0, 1e-300, -.infinity, .greatestFiniteMagnitude, Double.random(in: -1e9...1e9, using: &rng)]
                .randomElement(using: &rng)!
        }
        func coordinate() -> Coordinate { Coordinate(latitude: number(), longitude: number()) }
        func fix() -> DetectionEngine.FixSnapshot {
            .init(time: number(), coordinate: coordinate(), accuracy: Bool.random(using: &rng) ? number() : nil)
        }
        let options = DetectionEngine.DeviceOptionSnapshot(
            pending: (0..<Int.random(in: 0...3, using: &rng)).map { i in
                .init(fence: FenceID("f\(i) é"), toInside: Bool.random(using: &rng), since: number(), observedAt: number(),
                      coordinate: coordinate(), sequence: rng.next())
            },
            dwellRepeats: (0..<Int.random(in: 0...3, using: &rng)).map { i in
                .init(fence: FenceID("r\(i)"), visitSequence: rng.next(), count: Int.random(in: 0...1000, using: &rng))
            },
            anchor: Bool.random(using: &rng) ? fix() : nil, lastSequence: Int64.random(in: .min ... .max, using: &rng))
        let stream = DetectionEngine.DeviceStreamSnapshot(
            buffered: (0..<Int.random(in: 0...4, using: &rng)).map { _ in .init(fix: fix(), arrival: rng.next()) },
            newest: number(),
            recent: (0..<Int.random(in: 0...40, using: &rng)).map { _ in .init(time: number(), coordinate: coordinate(), accuracy: nil) })
        for (o, s) in [(options, stream), (options, nil), (nil, stream), (nil, nil)] as [(DetectionEngine.DeviceOptionSnapshot?, DetectionEngine.DeviceStreamSnapshot?)] {
            let bytes = OptionStateCodec.encode(options: o, stream: s)
            let decoded = try OptionStateCodec.decode(bytes)
            #expect(decoded.options == o && decoded.stream == s)
            // Bit for bit: re-encoding the decoded value gives the same bytes (-0.0 stays -0.0).
            #expect(OptionStateCodec.encode(options: decoded.options, stream: decoded.stream) == bytes)
            for cut in 0..<bytes.count {
                #expect(throws: OptionStateCodec.DecodingError.self) { try OptionStateCodec.decode(Array(bytes[..<cut])) }
            }
            #expect(throws: OptionStateCodec.DecodingError.self) { try OptionStateCodec.decode(bytes + [0]) }
        }
    }
}
