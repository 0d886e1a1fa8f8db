internal import CSQLite
import PerimeterEngine
import PerimeterGeometry
import PerimeterService

/// A device row's `state` column (schema version 8): what changes at every update of the device, as
/// one fixed-size BLOB that a commit overwrites in place with SQLite's incremental BLOB I/O
/// (``DeviceStateWriter``) instead of an `UPDATE` or upsert statement per row.
///
/// Layout, 40 bytes, every field little-endian: the id check (``idCheck(_:)``, 8 bytes), then the last
/// time (the bits of a `Double`), latitude, longitude (`Double` bits) and update count (`UInt64`).
/// The id check lets a commit confirm that a remembered key still names the device it means before it
/// writes (a wrong key would otherwise overwrite another device's state).
enum DeviceStateCodec {
    /// The column's size in bytes.
    static let size = 40
    /// Where the part a commit rewrites (everything after the id check) begins.
    static let valuesOffset = 8

    /// FNV-1a (64 bits) of the id's UTF-8: a check that the row holds the device meant, not an
    /// identifier (two ids may share it; a key is only trusted when it was read or written for the id).
    static func idCheck(_ id: DeviceID) -> UInt64 {
        func fnv1a<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            return hash
        }
        // A native string's bytes in place; others byte by byte.
        return id.rawValue.utf8.withContiguousStorageIfAvailable(fnv1a) ?? fnv1a(id.rawValue.utf8)
    }

    /// The 32 bytes after the id check: time, latitude, longitude and update count.
    @inline(__always)
    static func withValues<R>(of snapshot: DetectionEngine.DeviceSnapshot,
                              _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var values: (UInt64, UInt64, UInt64, UInt64) = (
            snapshot.lastTime.bitPattern.littleEndian,
            snapshot.lastCoordinate.latitude.bitPattern.littleEndian,
            snapshot.lastCoordinate.longitude.bitPattern.littleEndian,
            snapshot.updateCount.littleEndian)
        return try withUnsafeBytes(of: &values) { try body($0) }
    }

    /// The whole column for `snapshot`: the id check, then ``withValues(of:_:)``'s bytes.
    static func encode(_ snapshot: DetectionEngine.DeviceSnapshot) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        withUnsafeBytes(of: idCheck(snapshot.device).littleEndian) { bytes.append(contentsOf: $0) }
        withValues(of: snapshot) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The fields of a stored column, checking its size and that its id check is `device`'s.
    static func decode(_ bytes: [UInt8], device: DeviceID) throws
        -> (lastTime: Double, coordinate: Coordinate, updateCount: UInt64) {
        guard bytes.count == size else {
            throw GeofencingError(.incompatibleStorage, "the stored state of device \(device) is \(bytes.count) bytes, not \(size); the database is damaged")
        }
        func word(_ index: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in bytes[8 * index ..< 8 * index + 8].reversed() { value = value << 8 | UInt64(byte) }
            return value
        }
        guard word(0) == idCheck(device) else {
            throw GeofencingError(.incompatibleStorage, "the stored state of device \(device) belongs to another device; the database is damaged")
        }
        return (Double(bitPattern: word(1)), Coordinate(latitude: Double(bitPattern: word(2)), longitude: Double(bitPattern: word(3))),
                word(4))
    }
}

/// Writes known devices' ``DeviceStateCodec`` values in place, one BLOB handle for a commit's devices:
/// `sqlite3_blob_reopen` moves it to the next row by key, then 8 bytes are read (the id check) and 32
/// written. Measured in C against the same SQLite (1,000 devices, 10 commits, 1 KiB pages): ≈ 1,200
/// instructions a device, commit included, where the 32-row upsert it replaces took ≈ 6,100.
///
/// The handle must be closed (``close()``) before any other statement changes a device row (SQLite
/// expires it then), and before the writer goes away: a struct, so that each use of the handle is not
/// an exclusivity check on a class's property.
struct DeviceStateWriter {
    private let db: Database
    private var blob: OpaquePointer?

    init(_ db: Database) { self.db = db }

    /// What ``write(_:key:)`` found.
    enum Outcome {
        /// The row was there and held the device: its values are written.
        case written
        /// No row has the key, or its id check is another device's: the key was remembered wrongly.
        case staleKey
    }

    /// Overwrites the values of the row `key` with those of `devices[change]`'s snapshot, after checking
    /// that the row is its device's. The snapshot is read where it lies (passed alone, it was copied).
    /// - Throws: `DatabaseError` for anything else SQLite refuses, and for a column of the wrong size.
    mutating func write(_ devices: [DeviceChange], _ change: Int, key: Int64) throws(DatabaseError) -> Outcome {
        let code: Int32
        if let blob {
            code = sqlite3_blob_reopen(blob, key)
        } else {
            code = sqlite3_blob_open(db.handle, "main", "device", "state", key, 1, &blob)
            // On failure SQLite may still give a handle (it must be closed); a missing row is an error.
            if code != SQLITE_OK, let opened = blob {
                sqlite3_blob_close(opened)
                blob = nil
            }
        }
        // A missing row is SQLITE_ERROR ("no such rowid"); reopen leaves the handle aborted, so close it.
        if code == SQLITE_ERROR {
            close()
            return .staleKey
        }
        guard code == SQLITE_OK, let blob else {
            let error = db.error(code)
            close()
            throw error
        }
        guard sqlite3_blob_bytes(blob) == Int32(DeviceStateCodec.size) else {
            close()
            throw DatabaseError(resultCode: ResultCode(rawValue: SQLITE_CORRUPT),
                                message: "the state of device key \(key) is not \(DeviceStateCodec.size) bytes", path: db.path)
        }
        var check: UInt64 = 0
        let read = sqlite3_blob_read(blob, &check, 8, 0)
        guard read == SQLITE_OK else { throw db.error(read) }
        guard UInt64(littleEndian: check) == DeviceStateCodec.idCheck(devices[change].snapshot.device) else { return .staleKey }
        let written = DeviceStateCodec.withValues(of: devices[change].snapshot) { values in
            sqlite3_blob_write(blob, values.baseAddress, Int32(values.count), Int32(DeviceStateCodec.valuesOffset))
        }
        guard written == SQLITE_OK else { throw db.error(written) }
        return .written
    }

    /// Releases the handle.
    mutating func close() {
        if let blob { sqlite3_blob_close(blob) }
        blob = nil
    }
}
