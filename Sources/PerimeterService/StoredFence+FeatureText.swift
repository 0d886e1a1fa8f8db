import PerimeterFences

/// A stored fence's feature text: a `String`, or UTF-8 bytes that are a slice of a larger buffer.
///
/// An import reads a FeatureCollection of tens of megabytes and stores each feature's text as it came.
/// As slices of the request body the texts cost no copy, no UTF-8 check and no fresh memory; as `String`s
/// they cost all three, once for every byte of the body (about a twentieth of the import's CPU time).
enum FeatureText: Sendable {
    /// A text given as a `String`.
    case string(String)
    /// A text given as valid UTF-8 bytes (a slice keeps its whole buffer alive).
    case utf8(ArraySlice<UInt8>)

    /// The text as a `String` (made from the bytes when given as bytes).
    var string: String {
        switch self {
        case .string(let text): text
        case .utf8(let bytes): String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The length of the text in UTF-8 bytes.
    var utf8Count: Int {
        switch self {
        case .string(let text): text.utf8.count
        case .utf8(let bytes): bytes.count
        }
    }

    /// Calls `body` with the text's UTF-8 bytes, valid only during the call.
    func withUTF8<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        switch self {
        case .string(var text):
            // `String.withUTF8` takes an untyped throwing closure: carry the typed error out by hand.
            let outcome: Result<R, E> = text.withUTF8 { bytes in
                do throws(E) { return .success(try body(bytes)) } catch { return .failure(error) }
            }
            return try outcome.get()
        case .utf8(let bytes):
            let outcome: Result<R, E> = bytes.withUnsafeBufferPointer { bytes in
                do throws(E) { return .success(try body(bytes)) } catch { return .failure(error) }
            }
            return try outcome.get()
        }
    }
}

// Equal as the texts are equal as `String`s, however each was given (what `StoredFence` compared before
// it could hold bytes).
extension FeatureText: Hashable {
    static func == (a: Self, b: Self) -> Bool { a.string == b.string }

    func hash(into hasher: inout Hasher) { hasher.combine(string) }
}

extension StoredFence {
    /// Creates a stored fence whose feature text is `featureUTF8`, valid UTF-8 kept without a copy: a
    /// slice of the buffer the feature was read from (``GeoJSONReadResult/featureByteRanges`` says where
    /// each feature of a FeatureCollection is).
    ///
    /// The slice keeps its whole buffer alive as long as the fence does; the stores do not keep it (the
    /// SQLite store writes the bytes, ``InMemoryGeofencingStore`` copies them into a `String`).
    public init(id: FenceID, position: Int64, featureUTF8: ArraySlice<UInt8>, group: String? = nil, name: String? = nil,
                dwellTime: Double? = nil, expiresAt: Double? = nil, additionSequence: Int64? = nil) {
        self.init(id: id, position: position, featureText: .utf8(featureUTF8), group: group, name: name,
                  dwellTime: dwellTime, expiresAt: expiresAt, additionSequence: additionSequence)
    }

    /// The length of ``feature`` in UTF-8 bytes, without making the `String`.
    public var featureByteCount: Int { featureText.utf8Count }

    /// Calls `body` with the UTF-8 bytes of ``feature``, without making the `String` when the fence holds
    /// bytes; the buffer is valid only during the call.
    public func withFeatureUTF8<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try featureText.withUTF8(body)
    }
}
