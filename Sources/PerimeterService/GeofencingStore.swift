import PerimeterEngine
import PerimeterFences

/// Where a ``GeofencingService`` keeps its state so that a restart resumes exactly.
///
/// The service calls a store from under its own lock, one call at a time; implementations must still be
/// `Sendable` (they may be shared, for example with an outbox reader calling ``events(after:limit:)``).
/// Two implementations pass one shared test suite: ``InMemoryGeofencingStore`` and the SQLite store of
/// the `PerimeterSQLite` module.
public protocol GeofencingStore: AnyObject, Sendable {
    /// Everything stored, for a service that starts up.
    /// - Throws: when the store cannot be read or holds data this version cannot use.
    func load() throws -> StoredState

    /// Applies `changes` atomically: all of them or (when it throws) none.
    func commit(_ changes: StoreChanges) throws

    /// Up to `limit` logged events with a sequence number greater than `sequence`, in sequence order.
    func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent]
}

/// A fence as stored: the GeoJSON feature as given plus what the engine derived from it.
public struct StoredFence: Hashable, Sendable {
    /// The fence id (the feature's id).
    public var id: FenceID
    /// Order of first addition; fences are loaded in this order.
    public var position: Int64
    /// The GeoJSON Feature as given, serialised (the source of truth on reload).
    ///
    /// Made from the stored bytes when the fence was created with ``init(id:position:featureUTF8:group:name:dwellTime:expiresAt:additionSequence:)``;
    /// a store writes it without that copy through ``withFeatureUTF8(_:)``.
    public var feature: String {
        get { featureText.string }
        set { featureText = .string(newValue) }
    }
    /// The text itself, as given.
    var featureText: FeatureText
    /// Derived: the fence's group.
    public var group: String?
    /// Derived: the fence's name.
    public var name: String?
    /// Derived: the dwell time in seconds.
    public var dwellTime: Double?
    /// Derived: the expiry, in seconds since 1970.
    public var expiresAt: Double?
    /// The engine's accepted-update sequence when the fence was added
    /// (``DetectionEngine/additionSequence(of:)``), so that devices not evaluated against it since are
    /// recognised after a restart; `nil` when it was added before any update.
    public var additionSequence: Int64?

    /// Creates a stored fence.
    public init(id: FenceID, position: Int64, feature: String, group: String? = nil, name: String? = nil,
                dwellTime: Double? = nil, expiresAt: Double? = nil, additionSequence: Int64? = nil) {
        self.init(id: id, position: position, featureText: .string(feature), group: group, name: name,
                  dwellTime: dwellTime, expiresAt: expiresAt, additionSequence: additionSequence)
    }

    /// Creates a stored fence whose text is given either way (``FeatureText``).
    init(id: FenceID, position: Int64, featureText: FeatureText, group: String? = nil, name: String? = nil,
         dwellTime: Double? = nil, expiresAt: Double? = nil, additionSequence: Int64? = nil) {
        self.id = id
        self.position = position
        self.featureText = featureText
        self.group = group
        self.name = name
        self.dwellTime = dwellTime
        self.expiresAt = expiresAt
        self.additionSequence = additionSequence
    }
}

/// Everything a store holds, as loaded at start-up.
public struct StoredState: Hashable, Sendable {
    /// The fences, by ascending ``StoredFence/position``.
    public var fences: [StoredFence] = []
    /// Every device's state (last accepted update, update count, presence, option and stream state).
    public var devices: [DetectionEngine.DeviceSnapshot] = []
    /// The engine's accepted-update sequence (``DetectionEngine/EngineState/acceptedSequence``).
    public var acceptedSequence: Int64 = 0
    /// The engine's reorder-buffer arrival counter (``DetectionEngine/EngineState/arrivals``).
    public var arrivals: UInt64 = 0
    /// Service-wide consent, if it was ever set.
    public var serviceConsent: Bool?
    /// Per-device consent that was set explicitly.
    public var deviceConsents: [DeviceID: Bool] = [:]
    /// The sequence number of the last logged event (0 when the log is empty).
    public var lastEventSequence: Int64 = 0
    /// How many updates the service had consumed when it last committed (where a stream resumes).
    public var processedUpdates: UInt64 = 0

    /// An empty state.
    public init() {}
}

/// One change to the stored fences.
public enum FenceChange: Hashable, Sendable {
    /// Add the fence, or replace the one with the same id (keeping its position).
    case upsert(StoredFence)
    /// Remove the fence with this id and every presence in it.
    case remove(FenceID)
    /// Remove every fence and every presence.
    case removeAll
}

/// A device whose state changed.
public struct DeviceChange: Hashable, Sendable {
    /// The device's state now.
    public var snapshot: DetectionEngine.DeviceSnapshot
    /// Whether its memberships differ from what was last committed (only then are they rewritten).
    public var presenceChanged: Bool
    /// When `presenceChanged`: the memberships the store holds for the device before this commit, so
    /// that a store may write only the ones that differ; `nil` when they are not known (the service
    /// gives `nil` in a commit that removes fences), and then every membership is rewritten.
    public var storedMemberships: [DetectionEngine.MembershipSnapshot]?

    /// A number the committing service gives the device, the same in each of its commits; -1 when not
    /// given. A store may remember by number where it holds the device and find it there without a
    /// look-up by id — checking that the device there has this change's id, since another service (or
    /// the same one restarted) numbers devices otherwise. Not part of the change's value: changes that
    /// differ only in it are equal.
    public var deviceNumber: Int32 {
        get { numberHint.number }
        set { numberHint.number = newValue }
    }
    var numberHint = DeviceNumberHint()

    /// Creates a device change.
    public init(snapshot: DetectionEngine.DeviceSnapshot, presenceChanged: Bool,
                storedMemberships: [DetectionEngine.MembershipSnapshot]? = nil) {
        self.snapshot = snapshot
        self.presenceChanged = presenceChanged
        self.storedMemberships = storedMemberships
    }
}

/// ``DeviceChange/deviceNumber`` as stored: every hint equals every other and hashes to nothing, so that
/// two changes are equal exactly when what they write is equal.
struct DeviceNumberHint: Hashable, Sendable {
    /// The number; -1 when not given.
    var number: Int32 = -1

    static func == (_: DeviceNumberHint, _: DeviceNumberHint) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// What one commit writes, applied in this order: fence changes (in order), forgotten devices, devices,
/// events, consent, the processed-update counter and the engine's counters.
public struct StoreChanges: Hashable, Sendable {
    /// Fence changes, applied in order.
    public var fences: [FenceChange] = []
    /// Devices whose whole state (position, presence, option state) is deleted, before ``devices`` are
    /// written: a device forgotten and then heard from again in one commit appears in both.
    public var forgottenDevices: [DeviceID] = []
    /// Devices to write (each at most once).
    public var devices: [DeviceChange] = []
    /// Events to append; their sequence numbers continue the log without gaps.
    public var events: [GeofencingEvent] = []
    /// New service-wide consent, if it changed.
    public var serviceConsent: Bool?
    /// Per-device consent that changed.
    public var deviceConsents: [DeviceID: Bool] = [:]
    /// The new processed-update counter, if it changed.
    public var processedUpdates: UInt64?
    /// The engine's new accepted-update sequence, if it changed.
    public var acceptedSequence: Int64?
    /// The engine's new reorder-buffer arrival counter, if it changed.
    public var arrivals: UInt64?

    /// No changes.
    public init() {}

    /// Whether there is nothing to write.
    public var isEmpty: Bool {
        fences.isEmpty && forgottenDevices.isEmpty && devices.isEmpty && events.isEmpty && serviceConsent == nil
            && deviceConsents.isEmpty && processedUpdates == nil && acceptedSequence == nil && arrivals == nil
    }
}
