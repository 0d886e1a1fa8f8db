import Foundation
import PerimeterEngine
import PerimeterGeometry
import PerimeterNATS

/// One record of a partition's input stream: a device's location update, or a tick of the owner's
/// clock. The stream is the partition's whole history, so replaying it gives the same events.
public enum InputRecord: Sendable, Equatable {
    /// A location update (the device comes from the subject's token).
    case update(LocationUpdate)
    /// The clock of `partition`'s owner: fire every timer due by `time`, except those of `holding`
    /// (devices heard from too recently, which the live-service rules leave to their own updates); then
    /// apply the fence changes up to `fenceRevision` (0: none), the revision of the fences bucket the
    /// owner had received (``FenceFeed``).
    case tick(partition: Int, time: Date, holding: [DeviceID], fenceRevision: UInt64)

    /// The message for this record in `layout`, with its message id: an update's id is its identity
    /// (device, time, position), so a client's retry is stored once; a tick has none (its expected
    /// sequence fences it instead).
    public func message(in layout: ClusterLayout) -> OutgoingMessage {
        switch self {
        case .update(let update):
            let wire = UpdateWire(update)
            let token = layout.partitioning.token(of: update.device)
            let id = "u.\(token).\(update.time.timeIntervalSince1970.bitPattern).\(update.coordinate.latitude.bitPattern).\(update.coordinate.longitude.bitPattern)"
            return OutgoingMessage(subject: layout.inputSubject(of: update.device), payload: InputRecord.encode(wire),
                                   options: PublishOptions(messageID: id))
        case .tick(let partition, let time, let holding, let fenceRevision):
            let wire = TickWire(t: time.timeIntervalSince1970, holding: holding.map(\.rawValue), fences: fenceRevision)
            return OutgoingMessage(subject: layout.tickSubject(partition), payload: InputRecord.encode(wire))
        }
    }

    /// The record a stored message holds.
    /// - Throws: ``InputRecordError`` naming the sequence when the subject or payload is not one.
    public init(_ message: StreamMessage, in layout: ClusterLayout) throws(InputRecordError) {
        let parts = message.subject.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == layout.prefix, parts[1] == "in", let partition = Int(parts[2]) else {
            throw InputRecordError(sequence: message.sequence, problem: "subject \(message.subject) is not an input subject")
        }
        let data = Data(message.payload)
        if parts[3] == ClusterLayout.tickToken {
            guard let wire = try? JSONDecoder().decode(TickWire.self, from: data) else {
                throw InputRecordError(sequence: message.sequence, problem: "a tick's payload is not a tick")
            }
            self = .tick(partition: partition, time: Date(timeIntervalSince1970: wire.t), holding: wire.holding.map { DeviceID($0) },
                         fenceRevision: wire.fences)
            return
        }
        guard let device = SubjectToken.decode(parts[3]) else {
            throw InputRecordError(sequence: message.sequence, problem: "\(parts[3]) is not a device token")
        }
        guard let wire = try? JSONDecoder().decode(UpdateWire.self, from: data) else {
            throw InputRecordError(sequence: message.sequence, problem: "an update's payload is not an update")
        }
        self = .update(LocationUpdate(device: DeviceID(device), time: Date(timeIntervalSince1970: wire.t),
                                      coordinate: Coordinate(latitude: wire.lat, longitude: wire.lon),
                                      horizontalAccuracy: wire.acc, speed: wire.spd, course: wire.crs))
    }

    private static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        // Encoding these plain structs cannot fail.
        Array((try? JSONEncoder().encode(value)) ?? Data())
    }

    private struct UpdateWire: Codable {
        var t: Double
        var lat: Double
        var lon: Double
        var acc: Double?
        var spd: Double?
        var crs: Double?

        init(_ update: LocationUpdate) {
            t = update.time.timeIntervalSince1970
            lat = update.coordinate.latitude
            lon = update.coordinate.longitude
            acc = update.horizontalAccuracy
            spd = update.speed
            crs = update.course
        }
    }

    private struct TickWire: Codable {
        var t: Double
        var holding: [String]
        var fences: UInt64
    }
}

/// A stored input message that is not an input record.
public struct InputRecordError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The message's sequence in the input stream.
    public var sequence: UInt64
    /// What is wrong with it.
    public var problem: String

    public var description: String { "input message \(sequence): \(problem)" }
}
