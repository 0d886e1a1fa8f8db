import PerimeterEngine
import PerimeterNATS

/// Which partition a device belongs to, and its subject token: FNV-1a-32 of the device id's subject
/// token modulo the partition count — the partition a NATS server's `{{partition(count,1)}}` mapping
/// picks for that token (docs/cluster.md, "The parts").
public struct DevicePartitioning: Sendable, Equatable {
    /// The default number of partitions.
    public static let defaultCount = 64

    /// How many partitions there are (fixed for the life of the streams).
    public let count: Int

    /// Partitioning into `count` partitions; `nil` unless 1 ≤ `count` ≤ 65 536.
    public init?(count: Int = DevicePartitioning.defaultCount) {
        guard (1...65_536).contains(count) else { return nil }
        self.count = count
    }

    /// The device id as one subject token (``PerimeterNATS/SubjectToken/encode(_:)``).
    public func token(of device: DeviceID) -> String { SubjectToken.encode(device.rawValue) }

    /// The device's partition, 0 ..< ``count``.
    public func partition(of device: DeviceID) -> Int {
        SubjectToken.partition(ofToken: token(of: device), count: count)
    }
}
