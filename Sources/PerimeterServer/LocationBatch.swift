import PerimeterEngine
import PerimeterGeoJSON

/// The body of a `POST /v1/locations`, decoded: the updates to process and the items refused before
/// processing, each with its position in the body.
///
/// ``LocationBatchReader`` makes it straight from the bytes; ``tree(_:ndjson:)`` makes it the older way,
/// through ``JSONValue`` trees and ``LocationDecoder`` — the reference the reader must agree with, and its
/// fallback for bodies it does not read itself.
struct LocationBatch: Equatable, Sendable {
    /// An item refused by ``LocationDecoder``: its index in the body and what is wrong where.
    struct Invalid: Equatable {
        var index: Int
        var failure: LocationDecoder.Failure
    }

    /// An NDJSON line that is not JSON: its index and its rejection document (`index`, `code`, `line`, `detail`).
    struct Broken: Equatable {
        var index: Int
        var document: JSONValue
    }

    /// Items in the body (updates, invalid items and broken lines).
    var count = 0
    /// The decodable updates, in body order.
    var updates: [LocationUpdate] = []
    /// The item index of each of ``updates``.
    var origins: [Int] = []
    /// The items ``LocationDecoder`` refused, in body order.
    var invalid: [Invalid] = []
    /// The NDJSON lines that are not JSON, in body order.
    var broken: [Broken] = []
    /// Whether the body is one value (not an array, not NDJSON): its rejection is then a 422 problem.
    var isSingle = false

    /// Adds the next item: decodes `value` found at `path`.
    mutating func append(_ value: JSONValue, at path: JSONPath) {
        do throws(LocationDecoder.Failure) {
            updates.append(try LocationDecoder.decode(value, at: path))
            origins.append(count)
        } catch {
            invalid.append(Invalid(index: count, failure: error))
        }
        count += 1
    }

    /// Adds the next item, an update already decoded.
    mutating func append(_ update: LocationUpdate) {
        updates.append(update)
        origins.append(count)
        count += 1
    }

    /// Adds the next item, an NDJSON line that failed to parse at 1-based `line`.
    mutating func appendBroken(line: Int, _ error: JSONParseError) {
        broken.append(Broken(index: count, document: [
            "index": .integer(Int64(count)), "code": "invalidJSON", "line": .integer(Int64(line)),
            "detail": .string("line \(line), column \(error.column): \(error.message)"),
        ]))
        count += 1
    }

    /// The batch decoded through ``JSONValue`` trees: the whole body parsed by ``JSONParser`` (an array,
    /// or one object), or each non-blank NDJSON line on its own.
    /// - Throws: `empty-body` and `invalid-json` problems for a body that holds no update or is not JSON.
    static func tree(_ body: [UInt8], ndjson: Bool) throws(Problem) -> LocationBatch {
        var batch = LocationBatch()
        if ndjson {
            var lineNumber = 0
            for line in body.split(separator: 10, omittingEmptySubsequences: false) {
                lineNumber += 1
                let trimmed = line.last == 13 ? line.dropLast() : line
                if trimmed.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
                do throws(JSONParseError) {
                    batch.append(try JSONParser().parse(Array(trimmed)), at: JSONPath([.index(batch.count)]))
                } catch {
                    batch.appendBroken(line: lineNumber, error)
                }
            }
            guard batch.count > 0 else { throw Problem.badRequest("empty-body", "the NDJSON body holds no update") }
            return batch
        }
        let value = try PerimeterAPI.parseJSON(body)
        if case .array(let elements) = value {
            batch.updates.reserveCapacity(elements.count)
            for element in elements { batch.append(element, at: JSONPath([.index(batch.count)])) }
        } else {
            batch.append(value, at: JSONPath())
            batch.isSingle = true
        }
        return batch
    }
}
