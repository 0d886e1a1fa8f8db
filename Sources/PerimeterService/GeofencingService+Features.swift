import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON

extension GeofencingService {
    /// Starts monitoring `feature`, or replaces the monitored feature with the same id (devices inside
    /// keep their visit). Committed before it returns.
    ///
    /// - Throws: ``GeofencingError/Code/invalidFeature`` (no id, bad geometry or property; the problems
    ///   are attached), ``GeofencingError/Code/limitExceeded``, ``GeofencingError/Code/notConfigured``,
    ///   ``GeofencingError/Code/storageFailure``.
    public func addFeature(_ feature: GeoJSON.Feature) throws(GeofencingError) {
        try addFeatures([feature])
    }

    /// Adds or replaces several features atomically: if any is invalid or the limit would be exceeded,
    /// none is added. A later feature replaces an earlier one with the same id.
    ///
    /// - Complexity: O(total vertices) for the index rebuild, once.
    public func addFeatures(_ features: [GeoJSON.Feature]) throws(GeofencingError) {
        try relayAndApply(features, texts: nil)
    }

    /// ``addFeatures(_:)`` for features read from JSON text: `texts[i]` is the text `features[i]` was read
    /// from (``GeoJSONReadResult/featureByteRanges`` says where each is), and the store keeps it as it is
    /// instead of writing the feature anew — the same feature when read back, without the cost of
    /// encoding every coordinate again (about a sixth of importing large collections).
    ///
    /// - Throws: as ``addFeatures(_:)``; ``GeofencingError/Code/invalidArgument`` when the counts differ.
    public func addFeatures(_ features: [GeoJSON.Feature], texts: [String]) throws(GeofencingError) {
        try addFeatures(features, texts: texts.map(FeatureText.string))
    }

    /// ``addFeatures(_:texts:)`` with each text as UTF-8 bytes: `utf8Texts[i]` is the slice of the buffer
    /// `features[i]` was read from (`body[range]` for each of ``GeoJSONReadResult/featureByteRanges``), kept
    /// without a copy until it is stored. What the store keeps is the same as with `String` texts, and
    /// not the buffer (``StoredFence/init(id:position:featureUTF8:group:name:dwellTime:expiresAt:additionSequence:)``).
    ///
    /// - Throws: as ``addFeatures(_:texts:)``.
    public func addFeatures(_ features: [GeoJSON.Feature], utf8Texts: [ArraySlice<UInt8>]) throws(GeofencingError) {
        try addFeatures(features, texts: utf8Texts.map(FeatureText.utf8))
    }

    private func addFeatures(_ features: [GeoJSON.Feature], texts: [FeatureText]) throws(GeofencingError) {
        guard texts.count == features.count else {
            throw GeofencingError(.invalidArgument, "\(texts.count) texts were given for \(features.count) features; give one text per feature, the one it was read from")
        }
        try relayAndApply(features, texts: texts)
    }

    private func relayAndApply(_ features: [GeoJSON.Feature], texts: [FeatureText]?) throws(GeofencingError) {
        if let relay {
            try checkFeatures(features)
            if try relay.relayFences(upserted: features, removed: []) { return }
        }
        try applyFeatures(features, texts: texts)
    }

    /// Adds or replaces `features` in this service only (``addFeatures(_:)`` without the relay); `texts`,
    /// when given, are what the store keeps (``addFeatures(_:texts:)``).
    func applyFeatures(_ features: [GeoJSON.Feature], texts: [FeatureText]? = nil) throws(GeofencingError) {
        let ticket = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> UInt64? in
            let options = try c.configured()
            var fences: [Fence] = []
            fences.reserveCapacity(features.count)
            for (index, feature) in features.enumerated() {
                fences.append(try c.makeFence(feature, options: options, index: features.count > 1 ? index : nil))
            }
            let newIDs = Set(fences.map(\.id)).filter { c.features[$0] == nil }
            let total = c.features.count + newIDs.count
            if total > options.maximumMonitoredFeatures {
                throw GeofencingError(.limitExceeded,
                                      "adding \(newIDs.count) new features would monitor \(total), more than maximumMonitoredFeatures (\(options.maximumMonitoredFeatures)); remove features or raise the limit in configure(_:)")
            }
            for (k, (fence, feature)) in zip(fences, features).enumerated() {
                let position = c.positions[fence.id] ?? c.nextPosition
                if c.positions[fence.id] == nil { c.nextPosition += 1 }
                c.positions[fence.id] = position
                c.features[fence.id] = feature
                c.upsertFence(fence)
                c.pending.fences.append(.upsert(StoredFence(
                    id: fence.id, position: position, featureText: texts?[k] ?? .string(JSONWriter().string(.feature(feature))),
                    group: fence.group, name: fence.name, dwellTime: fence.dwellTime,
                    expiresAt: fence.expiresAt?.timeIntervalSince1970,
                    additionSequence: c.engine.additionSequence(of: fence.id))))
            }
            c.engine.prepareIndex()  // pay for the index here, not on the next update
            return c.commitTicket(force: true)
        }
        if let failure = ticket.flatMap(commit(through:)) {
            notify(errors: [failure])
            throw failure
        }
    }

    /// The monitored feature with `id`, as it was given.
    public func feature(id: FenceID) throws(GeofencingError) -> GeoJSON.Feature {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> GeoJSON.Feature in
            _ = try c.configured()
            guard let feature = c.features[id] else { throw Self.notFound(id) }
            return feature
        }
    }

    /// The fence made from the feature with `id` (what the engine watches), if monitored.
    public func fence(id: FenceID) throws(GeofencingError) -> Fence? {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> Fence? in
            _ = try c.configured()
            return c.engine.fence(id: id)
        }
    }

    /// The monitored features of `group` (every feature when `nil`), in the order they were first added.
    /// A feature's group is its `perimeter:group` property.
    public func features(group: String? = nil) throws(GeofencingError) -> [GeoJSON.Feature] {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> [GeoJSON.Feature] in
            _ = try c.configured()
            return c.orderedFenceIDs.compactMap { id in
                guard group == nil || c.engine.fence(id: id)?.group == group else { return nil }
                return c.features[id]
            }
        }
    }

    /// Stops monitoring the feature with `id`; presence in it is dropped without exit events.
    /// - Throws: ``GeofencingError/Code/featureNotFound`` when no such feature is monitored.
    public func removeFeature(id: FenceID) throws(GeofencingError) {
        let removed = try removeFeatures { id == $0.id }
        if removed == 0 { throw Self.notFound(id) }
    }

    /// Stops monitoring every feature of `group`.
    /// - Returns: how many features were removed.
    @discardableResult
    public func removeFeatures(group: String) throws(GeofencingError) -> Int {
        try removeFeatures { $0.group == group }
    }

    /// Stops monitoring every feature.
    public func clearFeatures() throws(GeofencingError) {
        if let relay {
            let all = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> [FenceID] in
                _ = try c.configured()
                return c.orderedFenceIDs
            }
            // Applied by the relay in its store's order: wiping this copy too would drop a fence
            // another service added meanwhile.
            if all.isEmpty { return }
            if try relay.relayFences(upserted: [], removed: all) { return }
        }
        let ticket = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> UInt64? in
            _ = try c.configured()
            c.removeAllFences()
            c.touch(c.engine.devicesWithOptionState)  // their stored option state names the fences
            c.features = [:]
            c.positions = [:]
            c.pending.fences.append(.removeAll)
            return c.commitTicket(force: true)
        }
        if let failure = ticket.flatMap(commit(through:)) {
            notify(errors: [failure])
            throw failure
        }
    }

    func removeFeatures(relaying: Bool = true, where predicate: (Fence) -> Bool) throws(GeofencingError) -> Int {
        // With a relay, the fences it removed count: the relay's watcher may apply the removal to this
        // service before the lines below do.
        var relayed = 0
        if relaying, let relay {
            let doomed = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> [FenceID] in
                _ = try c.configured()
                return c.engine.fenceSet.fences.filter(predicate).map(\.id)
            }
            if doomed.isEmpty { return 0 }
            if try relay.relayFences(upserted: [], removed: doomed) { return doomed.count }
            relayed = doomed.count
        }
        let (count, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> (Int, UInt64?) in
            _ = try c.configured()
            let doomed = c.engine.fenceSet.fences.filter(predicate).map(\.id)
            guard !doomed.isEmpty else { return (0, nil) }
            for id in doomed {
                c.removeFence(id: id)
                c.features[id] = nil
                c.positions[id] = nil
                c.pending.fences.append(.remove(id))
            }
            c.touch(c.engine.devicesWithOptionState)  // their stored option state names the fences
            return (doomed.count, c.commitTicket(force: true))
        }
        if let failure = ticket.flatMap(commit(through:)) {
            notify(errors: [failure])
            throw failure
        }
        return max(count, relayed)
    }

    static func notFound(_ id: FenceID) -> GeofencingError {
        GeofencingError(.featureNotFound, "no feature with id \"\(id)\" is monitored; features(group:) lists those that are",
                        featureID: id)
    }
}
