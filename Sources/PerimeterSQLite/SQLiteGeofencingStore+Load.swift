import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService

extension SQLiteGeofencingStore {
    /// Reads fences, devices with their presence, consent and the log position.
    ///
    /// - Complexity: linear in fences, devices and memberships; O(log n) in the event log.
    public func load() throws -> StoredState {
        try owner.withConnection("loading") { connection throws in
            // One read transaction: every table from the same snapshot, which the remembered values
            // (the device keys, the end of the log) then describe as of this `data_version`.
            let db = connection.db
            try db.execute("BEGIN")
            do {
                connection.forget()
                let dataVersion = try db.integer(literal: "PRAGMA data_version")
                let state = try Self.load(db, keys: &connection.deviceKeys, instantVisitKeys: &connection.instantVisitKeys)
                try db.execute("COMMIT")
                connection.deviceKeysComplete = true
                connection.dataVersion = dataVersion
                connection.lastEventSequence = state.lastEventSequence
                return state
            } catch {
                try? db.execute("ROLLBACK")
                connection.forget()
                throw error
            }
        }
    }

    private static func load(_ db: Database, keys: inout [DeviceID: Int64], instantVisitKeys: inout Set<Int64>?) throws -> StoredState {
        var withInstantVisits = Set<Int64>()
        var state = StoredState()
        let fences = try db.statement("""
            SELECT id, position, feature, grp, name, dwell_time, expires_at, added_sequence FROM fence ORDER BY position
            """)
        while try fences.step() {
            state.fences.append(StoredFence(
                id: FenceID(fences.string(0)), position: fences.int64(1), feature: fences.string(2),
                group: fences.optionalString(3), name: fences.optionalString(4),
                dwellTime: fences.optionalDouble(5), expiresAt: fences.optionalDouble(6),
                additionSequence: fences.isNull(7) ? nil : fences.int64(7)))
        }
        // Presence and option rows name their device by its key; each is decoded with its device, so
        // that a damaged one is refused naming the device.
        var presenceRows: [Int64: [UInt8]] = [:]
        let presence = try db.statement("SELECT device, memberships FROM presence")
        while try presence.step() {
            presenceRows[presence.int64(0)] = presence.blob(1)
        }
        var optionStates: [Int64: [UInt8]] = [:]
        let options = try db.statement("SELECT device, state FROM device_option")
        while try options.step() {
            optionStates[options.int64(0)] = options.blob(1)
        }
        let devices = try db.statement("SELECT key, id, state, instant_visits FROM device ORDER BY key")
        while try devices.step() {
            let key = devices.int64(0)
            let id = DeviceID(devices.string(1))
            let values = try DeviceStateCodec.decode(devices.blob(2), device: id)
            var memberships: [DetectionEngine.MembershipSnapshot] = []
            if let bytes = presenceRows.removeValue(forKey: key) {
                do {
                    memberships = try PresenceCodec.decode(bytes)
                } catch {
                    throw GeofencingError(.incompatibleStorage, "the stored presence of device \(id) cannot be read (\(error)); the database is damaged")
                }
                // In fence order, as a version-9 file's rows were returned (a commit writes them in the
                // engine's order).
                memberships.sort { $0.fence < $1.fence }
            }
            var snapshot = DetectionEngine.DeviceSnapshot(
                device: id, lastTime: values.lastTime, lastCoordinate: values.coordinate, updateCount: values.updateCount,
                memberships: memberships)
            if !devices.isNull(3) {
                withInstantVisits.insert(key)
                do {
                    snapshot.instantVisits = try InstantVisitCodec.decode(devices.blob(3))
                } catch {
                    throw GeofencingError(.incompatibleStorage, "the stored instant visits of device \(id) cannot be read (\(error)); the database is damaged")
                }
            }
            if let bytes = optionStates.removeValue(forKey: key) {
                do {
                    (snapshot.options, snapshot.stream) = try OptionStateCodec.decode(bytes)
                } catch {
                    throw GeofencingError(.incompatibleStorage, "the stored option state of device \(id) cannot be read (\(error)); the database is damaged")
                }
            }
            keys[id] = key
            state.devices.append(snapshot)
        }
        if let orphan = presenceRows.keys.min() {
            throw GeofencingError(.incompatibleStorage, "the store records presence for device key \(orphan) but no device row with that key; the database is inconsistent")
        }
        if let orphan = optionStates.keys.min() {
            throw GeofencingError(.incompatibleStorage, "the store records option state for device key \(orphan) but no device row with that key; the database is inconsistent")
        }
        instantVisitKeys = withInstantVisits
        let consent = try db.statement("SELECT device, granted FROM consent")
        while try consent.step() {
            state.deviceConsents[DeviceID(consent.string(0))] = consent.int64(1) != 0
        }
        state.serviceConsent = try db.integer("SELECT value FROM meta WHERE key = 'service_consent'").map { $0 != 0 }
        state.processedUpdates = UInt64(bitPattern: try db.integer("SELECT value FROM meta WHERE key = 'processed_updates'") ?? 0)
        state.acceptedSequence = try db.integer("SELECT value FROM meta WHERE key = 'accepted_sequence'") ?? 0
        state.arrivals = UInt64(bitPattern: try db.integer("SELECT value FROM meta WHERE key = 'arrivals'") ?? 0)
        state.lastEventSequence = try db.integer("SELECT coalesce(max(sequence), 0) FROM event") ?? 0
        return state
    }

    /// Up to `limit` events after `sequence`, in sequence order.
    ///
    /// - Complexity: O(log n + limit).
    public func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent] {
        try owner.withConnection("reading events from") { connection throws in
            let statement = try connection.db.statement(literal: """
                SELECT sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside,
                    observed_at, reason, fence_name, grp, properties, message
                FROM event WHERE sequence > ? ORDER BY sequence LIMIT ?
                """)
            statement.bind(sequence, at: 1)
            statement.bind(Int64(max(0, limit)), at: 2)
            var result: [GeofencingEvent] = []
            while try statement.step() {
                let sequence = statement.int64(0)
                let event = GeofenceEvent(
                    id: try Self.eventID(statement, 1, "id", of: sequence), visitID: try Self.eventID(statement, 2, "visit id", of: sequence),
                    kind: try Self.codedValue(statement, 3, "kind", of: sequence, decode: EventRowCodec.kind(code:)),
                    fence: FenceID(statement.string(4)), device: DeviceID(statement.string(5)),
                    time: Date(timeIntervalSinceReferenceDate: statement.double(6)),
                    coordinate: Coordinate(latitude: statement.double(7), longitude: statement.double(8)),
                    timeInside: statement.optionalDouble(9),
                    observedAt: Date(timeIntervalSinceReferenceDate: statement.double(10)),
                    reason: try Self.codedValue(statement, 11, "exit reason", of: sequence,
                                                 decode: EventRowCodec.reason(code:)))
                var properties: [String: JSONValue] = [:]
                if let text = statement.optionalString(14) {
                    guard case .object(let object)? = try? JSONParser().parse(text) else {
                        throw GeofencingError(.incompatibleStorage, "event \(statement.int64(0)) has properties that are not a JSON object: \(text.prefix(80))")
                    }
                    properties = object
                }
                result.append(GeofencingEvent(sequence: statement.int64(0), event: event,
                                              fenceName: statement.optionalString(12), group: statement.optionalString(13),
                                              properties: properties, message: statement.optionalString(15)))
            }
            return result
        }
    }

    /// The event id or visit id in `column`: a 16-byte BLOB's 32 hex digits, or the text as stored
    /// (`EventRowCodec`).
    private static func eventID(_ statement: Statement, _ column: Int32, _ what: String, of sequence: Int64) throws -> String {
        guard statement.isBlob(column) else { return statement.string(column) }
        let bytes = statement.blob(column)
        guard let text = EventRowCodec.idText(bytes) else {
            throw GeofencingError(.incompatibleStorage, "event \(sequence) has a \(what) of \(bytes.count) bytes, not 16; the database is damaged")
        }
        return text
    }

    /// The value in `column` stored as its code (read by `decode`) or, in a row migration 9 did not
    /// convert, as its name: an event's kind or exit reason (`EventRowCodec`). `what` names it in the error.
    private static func codedValue<Value: RawRepresentable>(_ statement: Statement, _ column: Int32, _ what: String,
                                                            of sequence: Int64, decode: (Int64) -> Value?) throws -> Value
    where Value.RawValue == String {
        if statement.isInteger(column) {
            let code = statement.int64(column)
            guard let value = decode(code) else {
                throw GeofencingError(.incompatibleStorage, "event \(sequence) has an unknown \(what) code \(code)")
            }
            return value
        }
        let text = statement.string(column)
        guard let value = Value(rawValue: text) else {
            throw GeofencingError(.incompatibleStorage, "event \(sequence) has an unknown \(what) \"\(text)\"")
        }
        return value
    }
}
