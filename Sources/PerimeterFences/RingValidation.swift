import PerimeterGeometry

/// Checks on polygon rings that produce warnings, not errors: Perimeter still uses such rings
/// (even-odd rule), but the author probably did not mean them.
enum RingValidation {
    /// How ``firstSelfIntersection(_:method:)`` searches.
    enum Method: Sendable {
        /// The star proof first (``isSimpleAsStar(_:edges:)``), then the line sweep for rings of
        /// ``sweepLineThreshold`` edges or more, and the pair sweep for shorter rings and for every ring
        /// neither proves simple (what validation uses).
        case automatic
        /// Edge boxes sorted by their west end, each compared with those that follow while their
        /// longitude ranges overlap; every pair whose boxes meet is tested.
        case pairs
        /// The line sweep (Shamos–Hoey) to prove the ring simple; the pair sweep when it cannot.
        case sweepLine
        /// The star proof (``isSimpleAsStar(_:edges:)``); the pair sweep when it cannot.
        case star
    }

    /// Rings with at least this many edges try the line sweep first (``Method/automatic``). Below it the
    /// pair sweep's few pairs cost less than sorting the line sweep's events (measured: with 64, the line
    /// sweep over gen_workload.py's rings of 64–200 vertices took more than the pair sweep had).
    static let sweepLineThreshold = 512

    /// The first pair of non-adjacent edges of a closed ring that touch or cross, as edge numbers
    /// (edge *i* runs from position *i* to *i*+1), or `nil` when the ring is simple.
    ///
    /// Two searches, both exact (``Planar/orientation(_:_:_:)``):
    /// - The pair sweep compares each edge with every edge whose longitude range overlaps its own and
    ///   keeps the smallest pair that touches: O(n log n + k) for n edges and k such pairs. k is small for
    ///   smooth rings but not for rough ones: the 50 rings of 1,000–20,000 vertices in gen_workload.py's
    ///   fences, whose vertices jump in and out by a few percent of the radius, have about 94 million
    ///   pairs (and as many pairs of overlapping boxes in two dimensions), which made this check the
    ///   slowest part of importing those fences.
    /// - The line sweep (Shamos–Hoey) only proves a ring simple, in O(n log n) whatever its shape: it
    ///   moves a vertical line across the ring keeping the edges it crosses in order from south to north,
    ///   and tests each edge only against its neighbours in that order when they become neighbours.
    ///   The first touching pair of non-adjacent edges is necessarily tested (just before the lowest
    ///   meeting point, the two edges are neighbours). The order is decided with orientation tests only;
    ///   anything it cannot order without a meeting of edges — a vertex used twice, a vertex on another
    ///   edge, adjacent edges folding back — ends it, and the pair sweep then finds the pair to report.
    ///   So a simple ring costs O(n log n) and a ring that is not costs what it did before.
    /// - Before both, the star proof (``isSimpleAsStar(_:edges:)``) proves in O(n), without sorting, the
    ///   rings that are star-shaped around a point it can find: convex rings, smooth ones, and rough ones
    ///   like gen_workload.py's, whose every edge faces one centre. It too only ever proves a ring simple.
    /// - Complexity: O(n) for a star-shaped ring, O(n log n) for another simple ring of
    ///   n ≥ ``sweepLineThreshold`` edges; otherwise O(n log n + k) as above. Repeated consecutive positions
    ///   are ignored (edge numbers then count distinct positions).
    static func firstSelfIntersection(_ positions: [Coordinate], method: Method = .automatic) -> (Int, Int)? {
        // Most rings repeat no position: then they are used as they are, without a copy.
        var repeats = false
        for k in positions.indices.dropFirst() where positions[k] == positions[k - 1] {
            repeats = true
            break
        }
        var ring = positions
        if repeats {
            ring = []
            ring.reserveCapacity(positions.count)
            for c in positions where ring.last != c { ring.append(c) }
        }
        let n = ring.count - 1  // edges
        guard n >= 3 else { return nil }
        let (tryStar, trySweepLine) = switch method {
        case .automatic: (true, n >= sweepLineThreshold)
        case .sweepLine: (false, true)
        case .star: (true, false)
        case .pairs: (false, false)
        }
        if tryStar, ring.withUnsafeBufferPointer({ isSimpleAsStar($0, edges: n) }) { return nil }
        if trySweepLine, ring.withUnsafeBufferPointer({ isSimpleBySweepLine($0, edges: n) }) { return nil }
        return firstTouchingPair(ring, edges: n)
    }

    /// The pair sweep (see ``firstSelfIntersection(_:method:)``) over a ring without repeated
    /// consecutive positions.
    private static func firstTouchingPair(_ ring: [Coordinate], edges n: Int) -> (Int, Int)? {
        var boxes: [EdgeBox] = []
        boxes.reserveCapacity(n)
        for i in 0..<n {
            let a = ring[i], b = ring[i + 1]
            boxes.append(EdgeBox(minX: min(a.longitude, b.longitude), maxX: max(a.longitude, b.longitude),
                                 minY: min(a.latitude, b.latitude), maxY: max(a.latitude, b.latitude), edge: i))
        }
        // Any order of boxes with equal west ends will do: each pair is still met once.
        boxes = bucketSorted(boxes, key: { $0.minX }) { $0.minX < $1.minX }
        var best: (Int, Int)?
        ring.withUnsafeBufferPointer { ring in
            boxes.withUnsafeBufferPointer { boxes in
                for k in 0..<n {
                    var m = k + 1
                    while m < n, boxes[m].minX <= boxes[k].maxX {
                        check(boxes[k], boxes[m], ring, edges: n, &best)
                        m += 1
                    }
                }
            }
        }
        return best
    }

    /// Tests one pair of edges whose longitude ranges overlap, keeping in `best` the smallest pair found
    /// (an `inout` parameter, where a captured variable cost an exclusivity check per pair).
    @inline(__always)
    private static func check(_ first: EdgeBox, _ other: EdgeBox, _ ring: UnsafeBufferPointer<Coordinate>, edges n: Int,
                              _ best: inout (Int, Int)?) {
        // Boxes apart: neither touching nor overlapping (the common case).
        if other.minX > first.maxX || other.maxX < first.minX || other.minY > first.maxY || other.maxY < first.minY {
            return
        }
        let (a, b) = (min(first.edge, other.edge), max(first.edge, other.edge))
        if let found = best, (a, b) >= found { return }  // cannot improve on the pair already found
        if b == a + 1 || (a == 0 && b == n - 1) {
            // Adjacent edges share a vertex; they are wrong only if they overlap along a line.
            if overlapsAlongLine(ring, a, b) { best = (a, b) }
            return
        }
        if segmentsTouch(ring[a], ring[a + 1], ring[b], ring[b + 1]) { best = (a, b) }
    }

    /// `items` sorted by `less`, which must order them by `key` first (a larger key, a later item).
    ///
    /// A bucket sort: the key's range is cut into as many equal buckets as there are items, each item
    /// goes to its key's bucket (rounding keeps the bucket number monotone in the key, so buckets are in
    /// order), and each bucket, typically of one or two items, is sorted by `less`. Longitudes of a ring
    /// spread evenly enough that this is linear; a comparison sort of the line sweep's events and the pair
    /// sweep's boxes was a third of validating gen_workload.py's fences (perf).
    /// - Complexity: O(n) for keys spread over their range; O(n log n) at worst (crowded buckets are
    ///   sorted by `sort(by:)`).
    static func bucketSorted<T>(_ items: [T], key: (T) -> Double, by less: (T, T) -> Bool) -> [T] {
        let n = items.count
        guard n > 16 else { return items.sorted(by: less) }
        var lo = Double.infinity, hi = -Double.infinity
        for item in items {
            let k = key(item)
            lo = min(lo, k)
            hi = max(hi, k)
        }
        var scale = Double(n - 1) / (hi - lo)
        if !scale.isFinite || !(scale > 0) { scale = 0 }  // one key (or a range too small to divide by)
        @inline(__always) func bucket(_ item: T) -> Int {
            let v = (key(item) - lo) * scale
            return v < Double(n - 1) ? Int(v) : n - 1  // NaN (never from finite keys) goes last, not to a trap
        }
        var start = [Int32](repeating: 0, count: n + 1)
        for item in items { start[bucket(item) + 1] += 1 }
        for b in 0..<n { start[b + 1] += start[b] }
        var next = start
        var sorted = items  // every slot is overwritten below
        sorted.withUnsafeMutableBufferPointer { sorted in
            for item in items {
                let b = bucket(item)
                sorted[Int(next[b])] = item
                next[b] += 1
            }
            var b = 0
            while b < n {
                let lower = Int(start[b]), upper = Int(start[b + 1])
                b += 1
                guard upper - lower > 1 else { continue }
                if upper - lower > 32 {
                    var crowded = UnsafeMutableBufferPointer(rebasing: sorted[lower..<upper])
                    crowded.sort(by: less)
                    continue
                }
                // Insertion sort: buckets hold a few items.
                for i in (lower + 1)..<upper {
                    let item = sorted[i]
                    var j = i
                    while j > lower, less(item, sorted[j - 1]) {
                        sorted[j] = sorted[j - 1]
                        j -= 1
                    }
                    sorted[j] = item
                }
            }
        }
        return sorted
    }

    /// Whether the line sweep proves the ring simple: no two non-adjacent edges touch and no two
    /// adjacent edges overlap. `false` means only "not proven" (the caller then searches every pair).
    ///
    /// Points are ordered by longitude, then latitude; an edge runs from its smaller end (where the line
    /// meets it) to its larger end (where it leaves it). At one point, leaving edges go before meeting
    /// ones, so the two edges of a vertex are never both in the order unless both start there.
    /// - Parameter ring: closed, without repeated consecutive positions; `edges` = `ring.count - 1`.
    /// - Complexity: O(n log n) comparisons, plus moving the ordered edges on each insertion and removal
    ///   (as many as a meridian crosses the ring).
    static func isSimpleBySweepLine(_ ring: UnsafeBufferPointer<Coordinate>, edges n: Int) -> Bool {
        @inline(__always) func precedes(_ p: Coordinate, _ q: Coordinate) -> Bool {
            p.longitude < q.longitude || (p.longitude == q.longitude && p.latitude < q.latitude)
        }
        // Adjacent edges fold back over each other only when collinear; checked once here.
        for i in 0..<n where overlapsAlongLine(ring, i, i + 1 < n ? i + 1 : 0) { return false }

        // Each edge's ends, smaller first; events are (edge << 1) | 1 for leaving, (edge << 1) for meeting.
        var low = [Coordinate](), high = [Coordinate]()
        low.reserveCapacity(n); high.reserveCapacity(n)
        for i in 0..<n {
            let a = ring[i], b = ring[i + 1]
            if precedes(a, b) { low.append(a); high.append(b) } else { low.append(b); high.append(a) }
        }
        // Sorted with their points beside them (a comparison then reads two neighbouring records).
        var sorted = [Event]()
        sorted.reserveCapacity(2 * n)
        for i in 0..<n {
            sorted.append(Event(x: low[i].longitude, y: low[i].latitude, code: Int32(i << 1)))
            sorted.append(Event(x: high[i].longitude, y: high[i].latitude, code: Int32(i << 1 | 1)))
        }
        sorted = bucketSorted(sorted, key: { $0.x }) { e, f in
            e.x < f.x || (e.x == f.x && (e.y < f.y || (e.y == f.y && e.code & 1 > f.code & 1)))  // leaving first
        }
        let events = sorted.map(\.code)
        return low.withUnsafeBufferPointer { low in
            high.withUnsafeBufferPointer { high in
                // Every vertex is the end of exactly two edges; a point shared by more is a vertex used twice.
                var run = 1
                for k in 1..<events.count {
                    if sorted[k].x == sorted[k - 1].x && sorted[k].y == sorted[k - 1].y {
                        run += 1
                        if run > 2 { return false }
                    } else {
                        run = 1
                    }
                }
                @inline(__always) func adjacent(_ a: Int, _ b: Int) -> Bool {
                    let d = abs(a - b)
                    return d == 1 || d == n - 1
                }
                /// Whether edge `a` lies south of edge `b` where the line crosses both; `nil` when that
                /// cannot be told without the two touching (not simple, or not proven).
                func isSouth(_ a: Int, of b: Int) -> Bool? {
                    if !precedes(low[a], low[b]) {
                        // a starts at or after b's start: where a's start lies against b. A shared start
                        // is on b's line (said at once: the orientation would reach its exact fallback).
                        let o = low[a] == low[b] ? 0 : Planar.orientation(low[b], high[b], low[a])
                        if o != 0 { return o < 0 }
                        // On b's line: only their shared start, otherwise a vertex touches b.
                        guard low[a] == low[b], adjacent(a, b) else { return nil }
                        let far = Planar.orientation(low[b], high[b], high[a])
                        return far == 0 ? nil : far < 0
                    } else {
                        let o = Planar.orientation(low[a], high[a], low[b])
                        if o != 0 { return o > 0 }
                        return nil  // b starts on a's line after a's start: b's start touches a
                    }
                }
                /// Whether two edges that become neighbours in the order touch (adjacent ones share their
                /// vertex and were checked above).
                func touch(_ a: Int, _ b: Int) -> Bool {
                    !adjacent(a, b) && segmentsTouch(ring[a], ring[a + 1], ring[b], ring[b + 1])
                }
                // The edges the line crosses, south to north. The functions below take it as a parameter
                // rather than capture it: a captured variable cost a dynamic exclusivity check on every
                // access (`swift_beginAccess`, about a tenth of the sweep, perf).
                var order: [Int32] = []
                /// Where `edge` belongs in `order` (the first position whose edge is not south of it);
                /// `nil` when the order cannot be told.
                func position(of edge: Int, _ order: [Int32]) -> Int? {
                    var lo = 0, hi = order.count
                    while lo < hi {
                        let mid = (lo + hi) >> 1
                        let other = Int(order[mid])
                        if other == edge { return mid }
                        guard let south = isSouth(other, of: edge) else { return nil }
                        if south { lo = mid + 1 } else { hi = mid }
                    }
                    return lo
                }
                /// Whether `edge` belongs at `j` in `order`: the edge below is south of it and the one
                /// above is not — where the binary search would put it, in an order that is consistent
                /// (as it is until the sweep passes a meeting of edges, which it finds first).
                @inline(__always) func fits(_ edge: Int, at j: Int, _ order: [Int32]) -> Bool {
                    (j == 0 || isSouth(Int(order[j - 1]), of: edge) == true)
                        && (j == order.count || isSouth(Int(order[j]), of: edge) == false)
                }
                // The two events of a vertex come one after the other (same point), and the second edge
                // is beside the first in the order: `near` is where the first was, for the second to look
                // there before searching. At a vertex the ring passes through (one edge leaves, the next
                // meets it: most vertices), the next edge takes the leaving one's place when it fits there,
                // without a search, a removal or an insertion. Its new neighbours are tested as after an
                // insertion; the two edges around it do not become neighbours, so they need no test.
                var near = -1
                var e = 0
                while e < events.count {
                    let event = events[e]
                    let samePoint = e > 0 && sorted[e].x == sorted[e - 1].x && sorted[e].y == sorted[e - 1].y
                    if !samePoint { near = -1 }
                    e += 1
                    let edge = Int(event >> 1)
                    if event & 1 == 0 {
                        let k: Int
                        if near >= 0, near <= order.count, fits(edge, at: near, order) {
                            k = near
                        } else if near >= 0, near < order.count, fits(edge, at: near + 1, order) {
                            k = near + 1
                        } else {
                            guard let found = position(of: edge, order) else { return false }
                            k = found
                        }
                        order.insert(Int32(edge), at: k)
                        if k > 0, touch(Int(order[k - 1]), edge) { return false }
                        if k + 1 < order.count, touch(edge, Int(order[k + 1])) { return false }
                        near = k
                    } else {
                        let k: Int
                        if near >= 0, near < order.count, Int(order[near]) == edge {
                            k = near
                        } else if near > 0, near - 1 < order.count, Int(order[near - 1]) == edge {
                            k = near - 1
                        } else {
                            guard let found = position(of: edge, order), found < order.count, Int(order[found]) == edge else { return false }
                            k = found
                        }
                        if e < events.count, events[e] & 1 == 0, case let next = Int(events[e] >> 1),
                           adjacent(edge, next), low[next] == high[edge],
                           k == 0 || isSouth(Int(order[k - 1]), of: next) == true,
                           k + 1 == order.count || isSouth(Int(order[k + 1]), of: next) == false {
                            order[k] = Int32(next)
                            e += 1
                            if k > 0, touch(Int(order[k - 1]), next) { return false }
                            if k + 1 < order.count, touch(next, Int(order[k + 1])) { return false }
                        } else {
                            order.remove(at: k)
                            if k > 0, k < order.count, touch(Int(order[k - 1]), Int(order[k])) { return false }
                        }
                        near = k
                    }
                }
                return true
            }
        }
    }

    /// A line-sweep event: where, and which edge (`edge << 1`, plus 1 where the edge is left).
    struct Event {
        var x, y: Double
        var code: Int32
    }

    /// An edge's bounding box and number.
    struct EdgeBox {
        var minX, maxX, minY, maxY: Double
        var edge: Int
    }

    /// Whether closed segments p1–p2 and q1–q2 share at least one point.
    static func segmentsTouch(_ p1: Coordinate, _ p2: Coordinate, _ q1: Coordinate, _ q2: Coordinate) -> Bool {
        let o1 = Planar.orientation(p1, p2, q1), o2 = Planar.orientation(p1, p2, q2)
        let o3 = Planar.orientation(q1, q2, p1), o4 = Planar.orientation(q1, q2, p2)
        if o1 * o2 < 0 && o3 * o4 < 0 { return true }
        return (o1 == 0 && Planar.isOnSegment(q1, p1, p2)) || (o2 == 0 && Planar.isOnSegment(q2, p1, p2))
            || (o3 == 0 && Planar.isOnSegment(p1, q1, q2)) || (o4 == 0 && Planar.isOnSegment(p2, q1, q2))
    }

    /// Whether two edges that share a vertex fold back over each other.
    private static func overlapsAlongLine(_ ring: UnsafeBufferPointer<Coordinate>, _ a: Int, _ b: Int) -> Bool {
        let (p1, p2, q1, q2) = (ring[a], ring[a + 1], ring[b], ring[b + 1])
        let shared: Coordinate, farP: Coordinate, farQ: Coordinate
        if p2 == q1 { (shared, farP, farQ) = (p2, p1, q2) } else { (shared, farP, farQ) = (p1, p2, q1) }
        // One orientation decides collinearity (the shared vertex is on both lines); testing it
        // against the shared vertex itself would always reach the exact fallback (a zero determinant).
        guard Planar.orientation(shared, farP, farQ) == 0 else { return false }
        // Collinear and sharing a vertex: they overlap when the far ends lie on the same side.
        let dp = (farP.longitude - shared.longitude, farP.latitude - shared.latitude)
        let dq = (farQ.longitude - shared.longitude, farQ.latitude - shared.latitude)
        return dp.0 * dq.0 + dp.1 * dq.1 > 0
    }
}
