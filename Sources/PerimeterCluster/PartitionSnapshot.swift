import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterNATS

/// A partition's engine state with the input sequence it covers and the fence revision it saw
/// (docs/cluster.md, "Snapshots"): a new owner restores it and replays the input from the next sequence.
public struct PartitionSnapshot: Sendable, Equatable {
    /// The partition.
    public var partition: Int
    /// The last input sequence applied (the replay starts after it).
    public var inputSequence: UInt64
    /// The last fence revision applied (0: none from the fences bucket).
    public var fenceRevision: UInt64
    /// Every device's state.
    public var devices: [DetectionEngine.DeviceSnapshot]
    /// The engine's own counters.
    public var engineState: DetectionEngine.EngineState

    /// A snapshot with these parts.
    public init(partition: Int, inputSequence: UInt64, fenceRevision: UInt64, devices: [DetectionEngine.DeviceSnapshot],
                engineState: DetectionEngine.EngineState) {
        self.partition = partition
        self.inputSequence = inputSequence
        self.fenceRevision = fenceRevision
        self.devices = devices
        self.engineState = engineState
    }

    /// The snapshot as bytes (JSON; every number round-trips exactly, infinities included).
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return Array((try? encoder.encode(Wire(self))) ?? Data())
    }

    /// The snapshot `bytes` hold.
    /// - Throws: ``SnapshotError`` when they are not one.
    public init(decoding bytes: [UInt8]) throws(SnapshotError) {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            self = try decoder.decode(Wire.self, from: Data(bytes)).snapshot
        } catch {
            throw SnapshotError(problem: "not a partition snapshot: \(error)")
        }
    }

    /// Restores the devices into `engine`, which must hold the fences as of ``fenceRevision`` and no device.
    public func restore(into engine: inout DetectionEngine) throws(DetectionEngine.RestoreError) {
        try engine.restore(devices, engineState: engineState)
    }
}

/// Bytes that are not a partition snapshot.
public struct SnapshotError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var problem: String
    public var description: String { problem }
}

/// The snapshots bucket: key `partition-<p>`, written by the partition's owner with compare-and-set on
/// the revision it last wrote or read, so an owner that lost its lease cannot overwrite a newer one.
public struct SnapshotStore: Sendable {
    /// The bucket.
    public let bucket: KeyValueBucket

    /// A store in `bucket`.
    public init(bucket: KeyValueBucket) { self.bucket = bucket }

    /// The bucket configuration (one revision per key: only the latest snapshot is kept).
    public static func bucketConfiguration(name: String = "perimeter-snapshots", replicas: Int = 1) -> KeyValueConfiguration {
        KeyValueConfiguration(bucket: name, history: 1, replicas: replicas)
    }

    /// The latest snapshot of `partition` and its revision, or `nil` when there is none.
    public func latest(_ partition: Int) throws -> (snapshot: PartitionSnapshot, revision: UInt64)? {
        guard let entry = try bucket.get(PartitionLease.key(partition)) else { return nil }
        return (try PartitionSnapshot(decoding: entry.value), entry.revision)
    }

    /// Writes `snapshot` if the key is still at `previousRevision` (0: there is no snapshot yet).
    /// - Returns: the new revision.
    /// - Throws: ``PerimeterNATS/NATSError`` with ``PerimeterNATS/NATSError/Reason/wrongLastSequence`` when
    ///   another snapshot was written since.
    public func save(_ snapshot: PartitionSnapshot, previousRevision: UInt64) throws(NATSError) -> UInt64 {
        let key = PartitionLease.key(snapshot.partition)
        return previousRevision == 0
            ? try bucket.create(key, snapshot.encoded())
            : try bucket.update(key, snapshot.encoded(), expectedRevision: previousRevision)
    }
}

/// The JSON form of a snapshot: short names, one struct per engine type.
private struct Wire: Codable {
    var p: Int
    var seq: UInt64
    var fences: UInt64
    var accepted: Int64
    var arrivals: UInt64
    var additions: [String: Int64]
    var devices: [Device]

    struct Fix: Codable {
        var t: Double, lat: Double, lon: Double, acc: Double?
        init(_ f: DetectionEngine.FixSnapshot) { t = f.time; lat = f.coordinate.latitude; lon = f.coordinate.longitude; acc = f.accuracy }
        var value: DetectionEngine.FixSnapshot { .init(time: t, coordinate: Coordinate(latitude: lat, longitude: lon), accuracy: acc) }
    }

    struct Membership: Codable {
        var fence: String, entry: Double, visit: UInt64, ordinal: UInt32?, dwelled: Bool
    }

    struct InstantVisit: Codable {
        var fence: String, entry: Double, ordinal: UInt32
    }

    struct Pending: Codable {
        var fence: String, inside: Bool, since: Double, observed: Double, lat: Double, lon: Double, seq: UInt64
    }

    struct Repeat: Codable {
        var fence: String, visit: UInt64, count: Int
    }

    struct Options: Codable {
        var pending: [Pending], repeats: [Repeat], anchor: Fix?, last: Int64
    }

    struct Buffered: Codable {
        var fix: Fix, arrival: UInt64
    }

    struct Stream: Codable {
        var buffered: [Buffered], newest: Double, recent: [Fix]
    }

    struct Device: Codable {
        var id: String, t: Double, lat: Double, lon: Double, n: UInt64
        var inside: [Membership], instants: [InstantVisit], options: Options?, stream: Stream?
    }

    init(_ s: PartitionSnapshot) {
        p = s.partition
        seq = s.inputSequence
        fences = s.fenceRevision
        accepted = s.engineState.acceptedSequence
        arrivals = s.engineState.arrivals
        additions = Dictionary(uniqueKeysWithValues: s.engineState.fenceAdditions.map { ($0.key.rawValue, $0.value) })
        devices = s.devices.map { d in
            Device(id: d.device.rawValue, t: d.lastTime, lat: d.lastCoordinate.latitude, lon: d.lastCoordinate.longitude, n: d.updateCount,
                   inside: d.memberships.map { Membership(fence: $0.fence.rawValue, entry: $0.entryTime, visit: $0.visitSequence,
                                                          ordinal: $0.ordinal, dwelled: $0.hasDwelled) },
                   instants: d.instantVisits.map { InstantVisit(fence: $0.fence.rawValue, entry: $0.entryTime, ordinal: $0.ordinal) },
                   options: d.options.map { o in
                       Options(pending: o.pending.map { Pending(fence: $0.fence.rawValue, inside: $0.toInside, since: $0.since,
                                                                observed: $0.observedAt, lat: $0.coordinate.latitude,
                                                                lon: $0.coordinate.longitude, seq: $0.sequence) },
                               repeats: o.dwellRepeats.map { Repeat(fence: $0.fence.rawValue, visit: $0.visitSequence, count: $0.count) },
                               anchor: o.anchor.map(Fix.init), last: o.lastSequence)
                   },
                   stream: d.stream.map { st in
                       Stream(buffered: st.buffered.map { Buffered(fix: Fix($0.fix), arrival: $0.arrival) }, newest: st.newest,
                              recent: st.recent.map(Fix.init))
                   })
        }
    }

    var snapshot: PartitionSnapshot {
        PartitionSnapshot(
            partition: p, inputSequence: seq, fenceRevision: fences,
            devices: devices.map { d in
                DetectionEngine.DeviceSnapshot(
                    device: DeviceID(d.id), lastTime: d.t, lastCoordinate: Coordinate(latitude: d.lat, longitude: d.lon), updateCount: d.n,
                    memberships: d.inside.map { .init(fence: FenceID($0.fence), entryTime: $0.entry, visitSequence: $0.visit,
                                                      ordinal: $0.ordinal, hasDwelled: $0.dwelled) },
                    instantVisits: d.instants.map { .init(fence: FenceID($0.fence), entryTime: $0.entry, ordinal: $0.ordinal) },
                    options: d.options.map { o in
                        .init(pending: o.pending.map { .init(fence: FenceID($0.fence), toInside: $0.inside, since: $0.since,
                                                             observedAt: $0.observed, coordinate: Coordinate(latitude: $0.lat, longitude: $0.lon),
                                                             sequence: $0.seq) },
                              dwellRepeats: o.repeats.map { .init(fence: FenceID($0.fence), visitSequence: $0.visit, count: $0.count) },
                              anchor: o.anchor?.value, lastSequence: o.last)
                    },
                    stream: d.stream.map { st in
                        .init(buffered: st.buffered.map { .init(fix: $0.fix.value, arrival: $0.arrival) }, newest: st.newest,
                              recent: st.recent.map(\.value))
                    })
            },
            engineState: .init(acceptedSequence: accepted, arrivals: arrivals,
                               fenceAdditions: Dictionary(uniqueKeysWithValues: additions.map { (FenceID($0.key), $0.value) })))
    }
}
