import Foundation

/// What the peer drivers need: where the exchange files are, and Perimeter's answers to compare with.
public struct PeerContext: Sendable {
    /// Folder holding fences.bin, fences_wkt.tsv, circles.csv, points.bin.
    public var dataDirectory: URL
    /// Scratch folder (bench/work): compiled refgrid, exchange files, PostGIS cluster.
    public var workDirectory: URL
    /// Folder of the peer scripts (bench/).
    public var scriptDirectory: URL
    /// `../shared` if present.
    public var sharedDirectory: URL?
    /// Repetitions.
    public var runs: Int
    /// Points given to the slow peers (PostGIS, Shapely per-point); `nil` for all.
    public var slowPeerPoints: Int?
    /// The CPU the measured processes are pinned to.
    public var core: Int
    /// Perimeter's polygon pairs, entries and exits.
    public var pairs: PairList
    /// Entry count found by Perimeter's engine.
    public var entries: Int
    /// Exit count found by Perimeter's engine.
    public var exits: Int
    /// Perimeter's circle pairs.
    public var circlePairs: PairList
    /// Device of each fix.
    public var devices: [UInt32]

    /// The interpreter of the project's virtual environment (`.venv` beside `bench/`, made by `make deps`),
    /// which holds Shapely, NumPy and psycopg2.
    public var python: URL {
        scriptDirectory.standardizedFileURL.deletingLastPathComponent().appendingPathComponent(".venv/bin/python")
    }

    /// Creates a context.
    public init(dataDirectory: URL, workDirectory: URL, scriptDirectory: URL, sharedDirectory: URL?, runs: Int,
                slowPeerPoints: Int?, core: Int, pairs: PairList, entries: Int, exits: Int, circlePairs: PairList,
                devices: [UInt32]) {
        self.dataDirectory = dataDirectory; self.workDirectory = workDirectory
        self.scriptDirectory = scriptDirectory; self.sharedDirectory = sharedDirectory
        self.runs = runs; self.slowPeerPoints = slowPeerPoints; self.core = core
        self.pairs = pairs; self.entries = entries; self.exits = exits
        self.circlePairs = circlePairs; self.devices = devices
    }

    /// Compares a peer's pair file with Perimeter's pairs over the first `points` fixes.
    func comparePairs(_ file: URL, peer: String, points: Int, reference: PairList, into report: inout Report) {
        do {
            let theirs = try PairList.read(contentsOf: file)
            let ours = reference.prefix(fixes: points)
            let difference = ours.difference(from: theirs, otherName: peer)
            report.check("\(peer): (fix, fence) pairs over \(points) points", passed: difference == nil,
                         difference ?? "\(ours.count) identical pairs")
            if difference == nil, points == devices.count {
                _ = theirs  // identical pairs imply identical entry/exit counts; nothing more to check
            }
        } catch {
            report.check("\(peer): (fix, fence) pairs", passed: false, "cannot read \(file.path): \(error)")
        }
    }
}

/// The C yardstick `../shared/bench/refgrid.c`, compiled with `gcc -O3 -march=native`.
public enum RefgridPeer {
    /// Builds and runs refgrid on the workload; adds its figures and checks.
    public static func run(_ context: PeerContext, into report: inout Report) {
        guard let shared = context.sharedDirectory else {
            report.note("refgrid skipped: ../shared is not present"); return
        }
        let source = shared.appendingPathComponent("bench/refgrid.c")
        guard FileManager.default.fileExists(atPath: source.path) else {
            report.note("refgrid skipped: \(source.path) not found"); return
        }
        guard ChildProcess.exists("gcc") else { report.note("refgrid skipped: gcc is not installed"); return }
        let binary = context.workDirectory.appendingPathComponent("refgrid")
        let compile = ChildProcess.run(["gcc", "-O3", "-march=native", "-o", binary.path, source.path, "-lm"])
        guard compile.status == 0 else { report.check("refgrid: compiles", passed: false, "gcc exited \(compile.status)"); return }
        // refgrid compares its per-point hit counts with truth_counts.bin: write Perimeter's.
        var counts = [UInt32](repeating: 0, count: context.devices.count)
        for f in context.pairs.fix { counts[Int(f)] += 1 }
        let truth = context.dataDirectory.appendingPathComponent("truth_counts.bin")
        try? counts.withUnsafeBytes { Data($0) }.write(to: truth)
        log("refgrid: \(context.runs) runs")
        let out = ChildProcess.run([binary.path, context.dataDirectory.path, "0.01", String(context.runs)], core: context.core)
        guard out.status == 0, let r = ChildProcess.lastJSONObject(out.output) else {
            report.check("refgrid: runs", passed: false, "exit status \(out.status), output: \(out.output.prefix(300))"); return
        }
        let mismatch = Int(r.number("points_mismatching_truth") ?? -1)
        let pairs = Int(r.number("pairs") ?? -1)
        report.check("refgrid (C): per-point fence counts", passed: mismatch == 0 && pairs == context.pairs.count,
                     "\(pairs) pairs vs Perimeter's \(context.pairs.count); \(mismatch) points differ")
        let enter = Int(r.number("enter") ?? -1), exit = Int(r.number("exit") ?? -1)
        report.check("refgrid (C): entry/exit counts", passed: enter == context.entries && exit == context.exits,
                     "refgrid \(enter) / \(exit) vs Perimeter \(context.entries) / \(context.exits)")
        let note = "cell 0.01°, median of \(context.runs), gcc -O3 -march=native"
        report.add(EngineBench.Section.build, "refgrid (C)", r.number("build_s") ?? 0, "s", higherIsBetter: false, note: "single run")
        report.add(EngineBench.Section.memory, "refgrid (C)", r.number("index_mib") ?? 0, "MiB", higherIsBetter: false, note: note)
        report.add(EngineBench.Section.query, "refgrid (C)", r.number("points_per_cpu_s") ?? 0, "points/s", note: note)
        report.add(EngineBench.Section.engine, "refgrid (C), entry/exit", r.number("with_events_points_per_cpu_s") ?? 0,
                   "updates/s", note: note)
    }
}

/// Shapely 2 (GEOS): STRtree + prepared `contains`, per point and bulk, via bench/shapely_peer.py in the
/// project's virtual environment (``PeerContext/python``).
public enum ShapelyPeer {
    /// Runs the Shapely driver; adds its figures and checks.
    public static func run(_ context: PeerContext, into report: inout Report) {
        let python = context.python
        guard FileManager.default.isExecutableFile(atPath: python.path),
              ChildProcess.run([python.path, "-c", "import shapely, numpy"]).status == 0 else {
            report.note("Shapely skipped: no virtual environment with shapely at \(python.path) (run `make deps`)"); return
        }
        let pairFile = context.workDirectory.appendingPathComponent("shapely_pairs.bin")
        let perPoint = context.slowPeerPoints ?? context.devices.count
        log("shapely: \(context.runs) runs")
        let out = ChildProcess.run([python.path, context.scriptDirectory.appendingPathComponent("shapely_peer.py").path,
                                    context.dataDirectory.path, pairFile.path, String(context.runs), String(perPoint)],
                                   core: context.core, environment: ["OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"])
        guard out.status == 0, let r = ChildProcess.lastJSONObject(out.output) else {
            report.check("Shapely: runs", passed: false, "exit status \(out.status)"); return
        }
        context.comparePairs(pairFile, peer: "Shapely 2", points: context.devices.count, reference: context.pairs, into: &report)
        let points = Double(context.devices.count)
        let bulk = points / max(1e-9, r.number("bulk_s") ?? 0)
        let single = Double(r.number("per_point_points") ?? 0) / max(1e-9, r.number("per_point_s") ?? 0)
        let version = r["version"] as? String ?? "?"
        report.add(EngineBench.Section.build, "Shapely \(version) STRtree + prepare", r.number("build_s") ?? 0, "s",
                   higherIsBetter: false, note: "median of \(context.runs)")
        report.add(EngineBench.Section.query, "Shapely \(version) bulk (STRtree candidates + prepared contains_xy)", bulk, "points/s",
                   note: "all points, median of \(context.runs)")
        report.add(EngineBench.Section.query, "Shapely \(version) per point (STRtree + prepared contains)", single, "points/s",
                   note: "first \(Int(r.number("per_point_points") ?? 0)) points")
        report.add(EngineBench.Section.engine, "Shapely \(version), best of bulk/per-point (queries only)", max(bulk, single),
                   "updates/s", note: "no entry/exit tracking: favours Shapely")
    }
}

/// PostGIS 3: a private cluster on a loopback port (bench/postgis.sh), GiST-indexed `ST_Contains`, raw
/// and on `ST_Subdivide(…, 256)`; circles with `ST_DWithin` on geography. Driver: bench/postgis_peer.py.
public enum PostGISPeer {
    /// Starts the cluster, runs the driver, stops the cluster; adds figures and checks.
    public static func run(_ context: PeerContext, into report: inout Report) {
        let python = context.python
        let script = context.scriptDirectory.appendingPathComponent("postgis.sh")
        guard FileManager.default.isExecutableFile(atPath: python.path),
              ChildProcess.run([python.path, "-c", "import psycopg2"]).status == 0 else {
            report.note("PostGIS skipped: no virtual environment with psycopg2 at \(python.path) (run `make deps`)"); return
        }
        guard FileManager.default.fileExists(atPath: "/usr/share/postgresql/15/extension/postgis.control") else {
            report.note("PostGIS skipped: postgresql-15-postgis-3 is not installed (run `make bench-deps`)"); return
        }
        let work = context.workDirectory.path
        let start = ChildProcess.run(["bash", script.path, "start", String(context.core), work])
        guard start.status == 0, let port = start.output.split(separator: "\n").last.map(String.init) else {
            report.note("PostGIS skipped: the cluster did not start (bash bench/postgis.sh start: status \(start.status))"); return
        }
        defer { _ = ChildProcess.run(["bash", script.path, "stop", work]) }
        let points = min(context.slowPeerPoints ?? context.devices.count, context.devices.count)
        let pairFile = context.workDirectory.appendingPathComponent("postgis_pairs.bin")
        let subFile = context.workDirectory.appendingPathComponent("postgis_sub_pairs.bin")
        let circleFile = context.workDirectory.appendingPathComponent("postgis_circle_pairs.bin")
        log("postgis: \(points) points, \(context.runs) runs")
        let out = ChildProcess.run([python.path, context.scriptDirectory.appendingPathComponent("postgis_peer.py").path,
                                    context.dataDirectory.path, context.workDirectory.appendingPathComponent("pgsock").path,
                                    port, String(points), String(context.runs), pairFile.path, subFile.path, circleFile.path])
        guard out.status == 0, let r = ChildProcess.lastJSONObject(out.output) else {
            report.check("PostGIS: runs", passed: false, "exit status \(out.status)"); return
        }
        context.comparePairs(pairFile, peer: "PostGIS ST_Contains", points: points, reference: context.pairs, into: &report)
        context.comparePairs(subFile, peer: "PostGIS ST_Subdivide", points: points, reference: context.pairs, into: &report)
        if context.circlePairs.count > 0 || FileManager.default.fileExists(atPath: circleFile.path) {
            context.comparePairs(circleFile, peer: "PostGIS ST_DWithin geography", points: points,
                                 reference: context.circlePairs, into: &report)
        }
        let version = r["version"] as? String ?? "3"
        let n = Double(points)
        let raw = n / max(1e-9, r.number("contains_s") ?? 0)
        let sub = n / max(1e-9, r.number("subdivide_s") ?? 0)
        let note = "\(points) points, median of \(context.runs), 1 core (no parallel workers)"
        report.add(EngineBench.Section.build, "PostGIS \(version) GiST index", r.number("index_s") ?? 0, "s",
                   higherIsBetter: false, note: "CREATE INDEX only")
        report.add(EngineBench.Section.build, "PostGIS \(version) ST_Subdivide(256) + GiST", r.number("subdivide_build_s") ?? 0, "s",
                   higherIsBetter: false, note: "subdivide + CREATE INDEX")
        report.add(EngineBench.Section.query, "PostGIS \(version) ST_Contains (GiST)", raw, "points/s", note: note)
        report.add(EngineBench.Section.query, "PostGIS \(version) ST_Contains on ST_Subdivide(256)", sub, "points/s", note: note)
        report.add(EngineBench.Section.engine, "PostGIS \(version), best of raw/subdivided (queries only)", max(raw, sub),
                   "updates/s", note: "no entry/exit tracking: favours PostGIS")
        if let c = r.number("circles_s") {
            report.add(EngineBench.Section.circles, "PostGIS \(version) ST_DWithin(geography)", n / max(1e-9, c), "updates/s",
                       note: note + "; queries only")
        }
    }
}
