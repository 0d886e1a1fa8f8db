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

    /// Writes `value` only if the key has no value (never written, deleted, or expired).
    /// - Returns: the new revision.
    /// - Throws: ``NATSError/Reason/wrongLastSequence`` when the key holds a value.
    @discardableResult
    public func create(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
        // Written here rather than with kvStore_Create: that call reads the key again after a refusal,
        // and when the key expires in between, the refusal's JetStream code is lost.
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try write(key, value, expecting: 0, operation: "create")
            } catch where error.reason == .wrongLastSequence {
                // The key's last revision may be a delete or purge marker: then it has no value.
                guard let marker = try lastMarker(key) else {
                    if attempt < 3 { continue }   // it expired just now: try again
                    throw error
                }
                guard let revision = marker.deletedAt else { throw error }
                do {
                    return try write(key, value, expecting: revision, operation: "create")
                } catch where error.reason == .wrongLastSequence && attempt < 3 {
                    continue
                }
            }
        }
    }

    /// Writes `value` only if the key's latest revision is `expectedRevision` (compare-and-set; 0: only
    /// if the key was never written or its revisions expired).
    /// - Returns: the new revision.
    /// - Throws: ``NATSError/Reason/wrongLastSequence`` when another write came first.
    @discardableResult
    public func update(_ key: String, _ value: [UInt8], expectedRevision: UInt64) throws(NATSError) -> UInt64 {
        try write(key, value, expecting: expectedRevision, operation: "update")
    }

    /// Every revision the bucket still holds from `revision` on (1: all), in revision order, and then
    /// every new write: a pull consumer on the bucket's stream. A fence feed replays from a snapshot's
    /// fence revision this way.
    /// - Parameter creationTimeout: how long creating the consumer may wait (default: the context's
    ///   request timeout; see ``JetStream/pullConsumer(stream:filterSubject:startSequence:inactiveThreshold:creationTimeout:)``).
    public func changes(from revision: UInt64, creationTimeout: Duration? = nil) throws(NATSError) -> KeyValueChanges {
        KeyValueChanges(bucket: name, consumer: try jetStream.pullConsumer(stream: "KV_\(name)", filterSubject: "$KV.\(name).>",
                                                                           startSequence: max(revision, 1),
                                                                           creationTimeout: creationTimeout))
    }

    /// A put of `key` fenced by the expected last revision (a publish to the bucket's subject, so the
    /// server's refusal comes back with its JetStream code).
    private func write(_ key: String, _ value: [UInt8], expecting revision: UInt64, operation: String) throws(NATSError) -> UInt64 {
        do {
            return try jetStream.publish("$KV.\(name).\(key)", value,
                                         options: PublishOptions(expectedLastSubjectSequence: revision, expectedStream: "KV_\(name)")).sequence
        } catch {
            var renamed = error
            renamed.operation = "\(operation) \(name)/\(key)" + (revision > 0 ? " at revision \(revision)" : "")
            throw renamed
        }
    }

    /// The key's last revision as stored: `nil` when there is none; `deletedAt` is its revision when it
    /// is a delete or purge marker.
    private func lastMarker(_ key: String) throws(NATSError) -> (revision: UInt64, deletedAt: UInt64?)? {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        let status = js_GetLastMsg(&message, jetStream.context, "KV_\(name)", "$KV.\(name).\(key)", nil, &code)
        if status == NATS_NOT_FOUND || Int(code.rawValue) == 10037 { return nil }
        try NATSError.check(status, "read \(name)/\(key)", code: code)
        defer { natsMsg_Destroy(message) }
        let revision = natsMsg_GetSequence(message)
        let operation = perimeter_nats_msg_header(message, "KV-Operation").map { String(cString: $0) }
        return (revision, operation == "DEL" || operation == "PURGE" ? revision : nil)
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

    /// The keys that have a revision stored, among those `pattern` matches (a key, or a pattern with `*`
    /// and `>` as whole tokens; `>`: every key), through the bucket stream's subjects
    /// (``JetStream/subjects(of:matching:)``): one request, no consumer — ``keys()`` creates one each
    /// time, and after a server of a cluster died such creations can time out. A key's latest revision
    /// may be a delete marker: ``get(_:)`` then answers `nil`. A key whose revisions expired (the
    /// bucket's TTL) is not listed.
    public func storedKeys(matching pattern: String = ">") throws(NATSError) -> [String] {
        let prefix = "$KV.\(name)."
        return try jetStream.subjects(of: "KV_\(name)", matching: prefix + pattern).keys
            .filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.sorted()
    }

    /// Watches `keys` (a key, or a pattern with `*` and `>`; `>` is every key): first the latest
    /// revision of each matching key, then ``KeyValueWatcher/Update/caughtUp``, then every new write, in
    /// revision order. (For every revision from a given one on, use ``changes(from:)``: libnats 3.4.1
    /// refuses a watch with history.)
    public func watch(_ keys: String = ">", ignoreDeletes: Bool = false) throws(NATSError) -> KeyValueWatcher {
        var options = kvWatchOptions()
        try NATSError.check(kvWatchOptions_Init(&options), "watch options")
        options.IgnoreDeletes = ignoreDeletes
        var watcher: OpaquePointer?
        try NATSError.check(kvStore_Watch(&watcher, store, keys, &options), "watch \(name)/\(keys)")
        return KeyValueWatcher(watcher!, bucket: self, keys: keys)
    }
}

/// The revisions of a bucket in order (``KeyValueBucket/changes(from:)``). Use from one thread.
public final class KeyValueChanges: @unchecked Sendable {
    /// The bucket read.
    public let bucket: String
    private let consumer: PullConsumer
    private let prefix: String

    init(bucket: String, consumer: PullConsumer) {
        self.bucket = bucket
        self.consumer = consumer
        prefix = "$KV.\(bucket)."
    }

    deinit { consumer.close() }

    /// The next revisions (at most `max`), waiting at most `timeout` for the first; empty when none came.
    public func next(max: Int = 1000, timeout: Duration) throws(NATSError) -> [KeyValueEntry] {
        try consumer.fetch(max: max, timeout: timeout).map { message in
            let operation: KeyValueEntry.Operation = switch message.keyValueOperation {
            case "DEL": .delete
            case "PURGE": .purge
            default: .put
            }
            return KeyValueEntry(key: message.subject.hasPrefix(prefix) ? String(message.subject.dropFirst(prefix.count)) : message.subject,
                                 value: operation == .put ? message.payload : [], revision: message.sequence,
                                 createdNanoseconds: message.storedAtNanoseconds, operation: operation)
        }
    }

    /// Stops reading (removes the consumer). Idempotent.
    public func close() { consumer.close() }
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
