import CSQLite
import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import PerimeterSQLite
import PerimeterTestSupport
import Testing

/// The SQLite store on a full or failing disk (docs/reliability.md, "Faults of the disk"): writes to the
/// test's own files fail through the fault VFS of CSQLite's shim once a budget of writes is spent. The
/// server answers `POST /v1/locations` with a 503 problem document, acknowledges nothing it did not
/// store, never damages the file, and stores again once space returns.
///
/// Serialized: the fault VFS has one armed prefix for the process.
@Suite("Disk faults", .serialized)
struct DiskFaultTests {
    /// A store in a fresh folder whose files the fault VFS watches (not failing yet).
    struct Setup {
        let folder = TemporaryFolder(prefix: "perimeter-disk-faults")
        var path: String { folder.path("store.sqlite") }

        init() throws {
            #expect(perimeter_fault_vfs_install() == SQLITE_OK)
            perimeter_fault_vfs_arm(folder.url.path, -1, perimeter_sqlite_full())
        }

        func api() throws -> PerimeterAPI {
            let service = GeofencingService(store: try SQLiteGeofencingStore(path: path))
            try service.configure(GeofencingOptions(defaultDwellTime: 60))
            return PerimeterAPI(service: service)
        }

        /// `writes` more writes succeed, then each fails with `error`.
        func failAfter(_ writes: Int, _ error: Int32) { perimeter_fault_vfs_arm(nil, Int64(writes), error) }
        func spaceReturns() { perimeter_fault_vfs_arm(nil, -1, perimeter_sqlite_full()) }
    }

    /// What the client was told: updates acknowledged (200) and the sequence numbers of their events.
    struct Acknowledged {
        var updates = 0
        var events: [Int64] = []
        var refusals = 0

        /// Posts update `step` of a van going in and out of the park, and records the answer.
        mutating func post(_ api: PerimeterAPI, step: Int) -> HTTPResponse {
            let response = T.call(api, "POST", "/v1/locations",
                                  body: T.json([T.update("van", step * 30, inside: step % 4 < 2)]))
            if response.status == 200 {
                updates += 1
                for event in T.parse(response)["events"]?.arrayValue ?? [] {
                    if let sequence = event["sequence"]?.doubleValue { events.append(Int64(sequence)) }
                }
            } else {
                refusals += 1
            }
            return response
        }
    }

    /// `PRAGMA integrity_check` of the file, through a connection of its own.
    static func integrity(_ path: String) -> String {
        var db: OpaquePointer?
        defer { sqlite3_close(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return "cannot open" }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK,
              sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return "no answer" }
        return String(cString: text)
    }

    /// Everything acknowledged is in the file after a reopen, and the file is sound.
    static func checkStored(_ path: String, _ acknowledged: Acknowledged) throws {
        #expect(integrity(path) == "ok")
        let store = try SQLiteGeofencingStore(path: path)
        let reopened = GeofencingService(store: store)
        try reopened.configure(GeofencingOptions(defaultDwellTime: 60))
        #expect(reopened.processedUpdateCount >= UInt64(acknowledged.updates))
        let stored = Set(try store.events(after: 0, limit: 10_000).map(\.sequence))
        #expect(Set(acknowledged.events).isSubset(of: stored), "acknowledged events missing from the store")
        try reopened.close()
    }

    @Test("a full or failing disk: 503 problem documents, then storing again when space returns",
          arguments: [("full", perimeter_sqlite_full()), ("failing", perimeter_sqlite_ioerr_write())])
    func postWhileTheDiskIsFull(kind: String, error: Int32) throws {
        let setup = try Setup()
        let api = try setup.api()
        #expect(T.call(api, "PUT", "/v1/fences/park", body: T.square()).status == 201)
        var acknowledged = Acknowledged()
        for step in 0..<4 { #expect(acknowledged.post(api, step: step).status == 200) }

        setup.failAfter(0, error)
        for step in 4..<8 {
            let response = acknowledged.post(api, step: step)
            #expect(response.status == 503, "\(kind): \(response.status) \(String(decoding: response.bodyBytes, as: UTF8.self))")
            #expect(response.header("Content-Type") == "application/problem+json")
            let problem = T.parse(response)
            #expect(problem["status"] == 503)
            #expect(problem["detail"]?.stringValue?.isEmpty == false)
        }
        #expect(perimeter_fault_vfs_faults() > 0)
        #expect(T.call(api, "GET", "/readyz").status < 600)

        setup.spaceReturns()
        // The refused updates may have been stored since (they were kept to retry): a retry of the same
        // positions is then out of order, so the van goes on from a later time.
        for step in 20..<24 { #expect(acknowledged.post(api, step: step).status == 200, "\(kind): no recovery") }
        try api.service.close()
        try Self.checkStored(setup.path, acknowledged)
    }

    /// The disk fills after every possible number of writes into the workload: whatever write fails
    /// (the write-ahead log, a checkpoint, the database file), nothing acknowledged is lost and the file
    /// stays sound.
    @Test("the disk fills after n writes, for every n", arguments: 0..<24)
    func diskFillsAfterWrites(writes: Int) throws {
        let setup = try Setup()
        let api = try setup.api()
        #expect(T.call(api, "PUT", "/v1/fences/park", body: T.square()).status == 201)
        var acknowledged = Acknowledged()
        setup.failAfter(writes, writes % 2 == 0 ? perimeter_sqlite_full() : perimeter_sqlite_ioerr_write())
        // 40 posts, one commit each: the write-ahead log writes a small commit's frames in one write
        // (CSQLite's shim), so reaching the 24th write takes about 24 commits.
        for step in 0..<40 {
            let status = acknowledged.post(api, step: step).status
            #expect(status == 200 || status == 503, "step \(step): \(status)")
        }
        #expect(acknowledged.refusals > 0, "the disk never filled: fewer than \(writes) writes")
        setup.spaceReturns()
        // A later commit stores what the failed ones kept; the close commits what is still pending.
        #expect(acknowledged.post(api, step: 60).status == 200, "no recovery")
        try api.service.close()
        try Self.checkStored(setup.path, acknowledged)
    }

    /// A FeatureCollection of 50 polygons of about 100 KB of text each (5 MB: a bulk commit).
    static let largeCollection: String = {
        let features = (0..<50).map { k in
            let ring = (0...4_000).map { v in
                let angle = 2 * Double.pi * Double(v % 4_000) / 4_000
                return "[\(-110.5 + 0.01 * Double(k) + 0.001 * cos(angle)),\(44.6 + 0.001 * sin(angle))]"
            }
            return #"{"type":"Feature","id":"f\#(k)","properties":{},"geometry":{"type":"Polygon","coordinates":[[\#(ring.joined(separator: ","))]]}}"#
        }
        return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }()

    /// An exclusive store (what `perimeter serve` opens) in the setup's folder, a service and an API on
    /// it, with one fence; `finish` closes them (releasing the file's lock) and checks the file.
    static func exclusiveAPI(_ setup: Setup) throws -> (api: PerimeterAPI, finish: () throws -> Void) {
        let store = try SQLiteGeofencingStore(path: setup.path, lockingMode: .exclusive)
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions(defaultDwellTime: 60))
        let api = PerimeterAPI(service: service)
        #expect(T.call(api, "PUT", "/v1/fences/park", body: T.square()).status == 201)
        return (api, {
            try service.close()
            store.close()
            #expect(integrity(setup.path) == "ok")
        })
    }

    /// An import of megabytes into an exclusive store is a bulk commit under a rollback journal, whose
    /// thousands of new 1 KiB pages reach the file gathered into writes of up to 64 KiB: 5 MB commits
    /// within a budget of 400 writes (one write per page would be about 5,000).
    @Test("a large fence import reaches the file in gathered writes")
    func importWritesAreGathered() throws {
        let setup = try Setup()
        let (api, finish) = try Self.exclusiveAPI(setup)
        setup.failAfter(400, perimeter_sqlite_full())
        let response = T.call(api, "POST", "/v1/fences", body: Self.largeCollection)
        #expect(response.status == 200, "\(response.status) \(String(decoding: response.bodyBytes.prefix(300), as: UTF8.self))")
        setup.spaceReturns()
        try finish()
        let reopened = try SQLiteGeofencingStore(path: setup.path)
        defer { reopened.close() }
        #expect(try reopened.load().fences.count == 51)
    }

    /// The disk fills at some write of a bulk commit — a gathered write, the journal, the switch out of
    /// the write-ahead log: the import is refused (503; the service keeps the changes to store with its
    /// next commit), the same import succeeds once space returns, and the file is sound and holds every
    /// fence after a reopen.
    @Test("the disk fills during a large fence import, after n writes", arguments: [0, 1, 2, 3, 5, 8, 30])
    func diskFillsDuringImport(writes: Int) throws {
        let setup = try Setup()
        let (api, finish) = try Self.exclusiveAPI(setup)
        setup.failAfter(writes, writes % 2 == 0 ? perimeter_sqlite_full() : perimeter_sqlite_ioerr_write())
        let refused = T.call(api, "POST", "/v1/fences", body: Self.largeCollection)
        #expect(refused.status == 503, "after \(writes) writes: \(refused.status)")
        #expect(perimeter_fault_vfs_faults() > 0)
        setup.spaceReturns()
        let retried = T.call(api, "POST", "/v1/fences", body: Self.largeCollection)
        #expect(retried.status == 200, "\(retried.status) \(String(decoding: retried.bodyBytes.prefix(300), as: UTF8.self))")
        try finish()
        let reopened = try SQLiteGeofencingStore(path: setup.path)
        defer { reopened.close() }
        #expect(try reopened.load().fences.count == 51)
    }
}
