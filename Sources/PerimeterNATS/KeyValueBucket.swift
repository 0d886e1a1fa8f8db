internal import CNATS
import Foundation

/// How to make a key-value bucket.
public struct KeyValueConfiguration: Sendable, Equatable {
    /// The bucket's name (letters, digits, `-` and `_`).
    public var bucket: String
    /// How many revisions of each key it keeps (1 to 64).
    public var history: Int
    /// How long an entry lives after it was written; `nil`: for ever. JetStream takes it in
    /// nanoseconds (``Swift/Duration`` is converted here, so a lease of `.seconds(10)` is 10 s, not 10 ns).
    public var ttl: Duration?
    /// How many servers keep a copy (1, or 3 in a cluster).
    public var replicas: Int
    /// Where the copies live.
    public var storage: StreamConfiguration.Storage

    /// A bucket named `bucket`: one revision per key, no TTL, one file-stored replica.
    public init(bucket: String, history: Int = 1, ttl: Duration? = nil, replicas: Int = 1,
                storage: StreamConfiguration.Storage = .file) {
        self.bucket = bucket
        self.history = history
        self.ttl = ttl
        self.replicas = replicas
        self.storage = storage
    }
}

/// One revision of one key.
public struct KeyValueEntry: Sendable, Equatable {
    /// What the revision did.
    public enum Operation: Sendable, Equatable {
        /// Stored ``KeyValueEntry/value``.
        case put
        /// Deleted the key (a watcher sees the marker; ``KeyValueBucket/get(_:)`` answers `nil`).
        case delete
        /// Deleted the key and its history.
        case purge
    }

    /// The key.
    public var key: String
    /// The value (empty for a delete or purge).
    public var value: [UInt8]
    /// The revision: the bucket's stream sequence of this write, increasing over the whole bucket.
    /// Compare-and-set updates name it (``KeyValueBucket/update(_:_:expectedRevision:)``).
    public var revision: UInt64
    /// When it was written, in nanoseconds since 1970 (UTC).
    public var createdNanoseconds: Int64
    /// For a watcher: how many newer revisions the bucket already had when this one was delivered.
    public var delta: UInt64
    /// What the revision did.
    public var operation: Operation

    /// The value as UTF-8 text.
    public var text: String { String(decoding: value, as: UTF8.self) }

    /// An entry with these parts.
    public init(key: String, value: [UInt8], revision: UInt64, createdNanoseconds: Int64 = 0, delta: UInt64 = 0,
                operation: Operation = .put) {
        self.key = key
        self.value = value
        self.revision = revision
        self.createdNanoseconds = createdNanoseconds
        self.delta = delta
        self.operation = operation
    }

    init(_ entry: OpaquePointer) {
        key = kvEntry_Key(entry).map { String(cString: $0) } ?? ""
        let count = Int(kvEntry_ValueLen(entry))
        if count > 0, let bytes = kvEntry_Value(entry) {
            value = Array(UnsafeRawBufferPointer(start: bytes, count: count))
        } else {
            value = []
        }
        revision = kvEntry_Revision(entry)
        createdNanoseconds = kvEntry_Created(entry)
        delta = kvEntry_Delta(entry)
        switch kvEntry_Operation(entry) {
        case kvOp_Delete: operation = .delete
        case kvOp_Purge: operation = .purge
        default: operation = .put
        }
    }
}

/// A JetStream key-value bucket: get, put, create-only, compare-and-set by revision, delete and watch.
///
/// Every write gets a revision that grows across the whole bucket; ``create(_:_:)`` and
/// ``update(_:_:expectedRevision:)`` fail with ``NATSError/Reason/wrongLastSequence`` when someone
/// else wrote the key first — the fence Perimeter's partition leases are built on. Thread-safe.
public final class KeyValueBucket: @unchecked Sendable {
    /// The bucket's name.
    public let name: String
    private let jetStream: JetStream
    let store: OpaquePointer

    init(creating configuration: KeyValueConfiguration, in jetStream: JetStream) throws(NATSError) {
        self.jetStream = jetStream
        name = configuration.bucket
        var config = kvConfig()
        try NATSError.check(kvConfig_Init(&config), "bucket configuration")
        var store: OpaquePointer?
        let status = configuration.bucket.withCString { cBucket in
            config.Bucket = cBucket
            config.History = UInt8(clamping: configuration.history)
            config.TTL = configuration.ttl?.nanoseconds ?? 0
            config.Replicas = Int32(configuration.replicas)
            config.StorageType = configuration.storage == .file ? js_FileStorage : js_MemoryStorage
            return js_CreateKeyValue(&store, jetStream.context, &config)
        }
        try NATSError.check(status, "create bucket \(configuration.bucket)")
        self.store = store!
    }

    init(opening bucket: String, in jetStream: JetStream) throws(NATSError) {
        self.jetStream = jetStream
        name = bucket
        var store: OpaquePointer?
        try NATSError.check(js_KeyValue(&store, jetStream.context, bucket), "open bucket \(bucket)")
        self.store = store!
    }

    deinit { kvStore_Destroy(store) }

    /// The latest revision of `key`, or `nil` when it has none or was deleted.
    public func get(_ key: String) throws(NATSError) -> KeyValueEntry? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, store, key)
        if status == NATS_NOT_FOUND { return nil }
        try NATSError.check(status, "get \(name)/\(key)")
        defer { kvEntry_Destroy(entry) }
        return KeyValueEntry(entry!)
    }

    /// Writes `value` whatever the key holds. - Returns: the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { kvStore_Put(&revision, store, key, $0.baseAddress, Int32($0.count)) }
        try NATSError.check(status, "put \(name)/\(key)")
        return revision
    }

    /// Writes `value` only if the key has no value (never written, or deleted).
    /// - Returns: the new revision.
    /// - Throws: ``NATSError/Reason/wrongLastSequence`` when the key holds a value.
    @discardableResult
    public func create(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { kvStore_Create(&revision, store, key, $0.baseAddress, Int32($0.count)) }
        let code = status == NATS_OK ? jsErrCode(0) : KeyValueBucket.lastJetStreamCode(status)
        try NATSError.check(status, "create \(name)/\(key)", code: code)
        return revision
    }

    /// Writes `value` only if the key's latest revision is `expectedRevision` (compare-and-set).
    /// - Returns: the new revision.
    /// - Throws: ``NATSError/Reason/wrongLastSequence`` when another write came first.
    @discardableResult
    public func update(_ key: String, _ value: [UInt8], expectedRevision: UInt64) throws(NATSError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes {
            kvStore_Update(&revision, store, key, $0.baseAddress, Int32($0.count), expectedRevision)
        }
        let code = status == NATS_OK ? jsErrCode(0) : KeyValueBucket.lastJetStreamCode(status)
        try NATSError.check(status, "update \(name)/\(key) at revision \(expectedRevision)", code: code)
        return revision
    }

    /// Deletes the key (a delete marker: watchers see it, ``get(_:)`` answers `nil`).
    public func delete(_ key: String) throws(NATSError) {
        try NATSError.check(kvStore_Delete(store, key), "delete \(name)/\(key)")
    }

    /// Every key that holds a value now.
    public func keys() throws(NATSError) -> [String] {
        var list = kvKeysList()
        let status = kvStore_Keys(&list, store, nil)
        if status == NATS_NOT_FOUND { return [] }
        try NATSError.check(status, "keys of \(name)")
        defer { kvKeysList_Destroy(&list) }
        return (0..<Int(list.Count)).compactMap { i in list.Keys[i].map { String(cString: $0) } }
    }

    /// Watches `keys` (a key, or a pattern with `*` and `>`; `>` is every key): first the latest
    /// revision of each matching key (all revisions with `includeHistory`), then
    /// ``KeyValueWatcher/Update/caughtUp``, then every new write, in revision order.
    public func watch(_ keys: String = ">", includeHistory: Bool = false, ignoreDeletes: Bool = false) throws(NATSError) -> KeyValueWatcher {
        var options = kvWatchOptions()
        try NATSError.check(kvWatchOptions_Init(&options), "watch options")
        options.IncludeHistory = includeHistory
        options.IgnoreDeletes = ignoreDeletes
        var watcher: OpaquePointer?
        try NATSError.check(kvStore_Watch(&watcher, store, keys, &options), "watch \(name)/\(keys)")
        return KeyValueWatcher(watcher!, bucket: self, keys: keys)
    }

    /// The JetStream code behind a failed key-value write. libnats reports a conditional write's
    /// refusal as a status only; its text names the server's error, whose code is taken from there.
    private static func lastJetStreamCode(_ status: natsStatus) -> jsErrCode {
        var last = NATS_OK
        guard let text = nats_GetLastError(&last).map({ String(cString: $0) }) else { return jsErrCode(0) }
        if text.contains("wrong last sequence") { return jsErrCode(UInt32(NATSError.wrongLastSequenceCode)) }
        return jsErrCode(0)
    }
}

/// A running watch of a bucket's keys (``KeyValueBucket/watch(_:includeHistory:ignoreDeletes:)``).
/// Read it from one thread; ``stop()`` from any.
public final class KeyValueWatcher: @unchecked Sendable {
    /// What a watcher delivers.
    public enum Update: Sendable, Equatable {
        /// A revision of a key.
        case entry(KeyValueEntry)
        /// The initial values have all been delivered; what follows is new.
        case caughtUp
    }

    /// The pattern watched.
    public let keys: String
    private let watcher: OpaquePointer
    private let bucket: KeyValueBucket

    init(_ watcher: OpaquePointer, bucket: KeyValueBucket, keys: String) {
        self.watcher = watcher
        self.bucket = bucket
        self.keys = keys
    }

    deinit {
        stop()
        kvWatcher_Destroy(watcher)
    }

    /// The next update, waiting at most `timeout`; `nil` when none came in time.
    /// - Throws: ``NATSError`` when the watcher was stopped or the connection closed.
    public func next(timeout: Duration) throws(NATSError) -> Update? {
        var entry: OpaquePointer?
        let status = kvWatcher_Next(&entry, watcher, timeout.milliseconds)
        if status == NATS_TIMEOUT { return nil }
        try NATSError.check(status, "watch \(bucket.name)/\(keys)")
        guard let entry else { return .caughtUp }
        defer { kvEntry_Destroy(entry) }
        return .entry(KeyValueEntry(entry))
    }

    /// Stops the watch: a waiting ``next(timeout:)`` returns with an error. Idempotent.
    public func stop() { _ = kvWatcher_Stop(watcher) }
}
