import Foundation

/// Command-line options of perimeter-bench.
public struct BenchOptions: Sendable {
    /// Tiny workload, one run, short curves: every benchmark in seconds (CI).
    public var smoke = false
    /// Workload size relative to the reference (1 = 10,000 fences, 1,000,000 updates).
    public var size = 1.0
    /// Repetitions per figure.
    public var runs = 5
    /// Read gen_workload.py output from this folder instead of generating.
    public var workloadDirectory: String?
    /// Where results go.
    public var outputDirectory = "bench/results"
    /// Scratch folder.
    public var workDirectory = "bench/work"
    /// Folder of the peer scripts.
    public var scriptDirectory = "bench"
    /// `../shared`.
    public var sharedDirectory = ProcessInfo.processInfo.environment["PERIMETER_SHARED"] ?? "../shared"
    /// Peers to run.
    public var peers: Set<String> = ["refgrid", "shapely", "postgis"]
    /// Points given to PostGIS and to Shapely's per-point loop; `nil` for all.
    public var slowPeerPoints: Int? = 200_000
    /// CPU the measured processes are pinned to.
    public var core = 1
    /// The parts to run (`--only`; `--no-scaling` removes `scaling`).
    public var parts = Set(BenchPart.allCases)
    /// Whether `--only` chose the parts (results then go to a scratch folder unless `--out` is given).
    public var partial = false
    /// Run the scaling curves.
    public var scaling: Bool { parts.contains(.scaling) }
    /// Largest fence count of the fence curve.
    public var maxFences = 1_000_000
    /// Largest device count of the device curve.
    public var maxDevices = 1_000_000
    /// Largest vertex count of the vertex curve.
    public var maxVertices = 100_000
    /// Approximate size of the bulk-load file in bytes.
    public var loadBytes = 50 * 1_048_576
    /// Child mode (`--child MODE FILE`), internal.
    public var child: (LoadBench.Mode, String)?

    /// The usage text.
    public static let usage = """
    usage: perimeter-bench [--smoke] [--size S] [--runs N] [--workload DIR] [--out DIR] [--work DIR]
                           [--shared DIR] [--peers refgrid,shapely,postgis|none] [--peer-points N|all]
                           [--core N] [--no-scaling] [--max-fences N] [--max-devices N] [--max-vertices N]
                           [--load-mib N] [--only PART,...]

      --only PART,...  run only these parts (in their usual order): \(BenchPart.allCases.map(\.rawValue).joined(separator: ","))
                       (peers and service also run engine, whose answers they are checked against);
                       results go to <work>/only-results unless --out is given
      --work DIR       scratch folder (default bench/work), held for the run: a second run in it is refused
    """

    /// A usage error.
    public struct UsageError: Error, CustomStringConvertible {
        /// The message.
        public var description: String
    }

    /// Parses arguments (without the program name).
    public init(arguments: [String]) throws {
        var i = 0
        func value(_ flag: String) throws -> String {
            i += 1
            guard i < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
            return arguments[i]
        }
        func number<T: LosslessStringConvertible>(_ flag: String, _: T.Type) throws -> T {
            let v = try value(flag)
            guard let n = T(v) else { throw UsageError(description: "\(flag): not a number: \(v)") }
            return n
        }
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "--smoke": smoke = true
            case "--size": size = try number(a, Double.self)
            case "--runs": runs = try number(a, Int.self)
            case "--workload": workloadDirectory = try value(a)
            case "--out": outputDirectory = try value(a)
            case "--work": workDirectory = try value(a)
            case "--scripts": scriptDirectory = try value(a)
            case "--shared": sharedDirectory = try value(a)
            case "--peers":
                let v = try value(a)
                peers = v == "none" ? [] : Set(v.split(separator: ",").map(String.init))
                if let bad = peers.first(where: { !["refgrid", "shapely", "postgis"].contains($0) }) {
                    throw UsageError(description: "--peers: unknown peer \(bad)")
                }
            case "--peer-points":
                let v = try value(a)
                if v == "all" { slowPeerPoints = nil } else if let n = Int(v), n > 0 { slowPeerPoints = n } else {
                    throw UsageError(description: "--peer-points: expected a positive number or 'all', got \(v)")
                }
            case "--core": core = try number(a, Int.self)
            case "--no-scaling": parts.remove(.scaling)
            case "--only":
                let chosen = try BenchPart.parseList(try value(a))
                parts = arguments.contains("--no-scaling") ? chosen.subtracting([.scaling]) : chosen
                partial = true
            case "--max-fences": maxFences = try number(a, Int.self)
            case "--max-devices": maxDevices = try number(a, Int.self)
            case "--max-vertices": maxVertices = try number(a, Int.self)
            case "--load-mib": loadBytes = Int(try number(a, Double.self) * 1_048_576)
            case "--child":
                let m = try value(a)
                guard let mode = LoadBench.Mode(rawValue: m) else { throw UsageError(description: "--child: unknown mode \(m)") }
                child = (mode, try value(a))
            case "-h", "--help": throw UsageError(description: Self.usage)
            default: throw UsageError(description: "unknown option \(a)\n\(Self.usage)")
            }
            i += 1
        }
        guard size > 0, size <= 100 else { throw UsageError(description: "--size must be in (0, 100]") }
        guard runs >= 1 else { throw UsageError(description: "--runs must be at least 1") }
        if partial, !arguments.contains("--out") { outputDirectory = workDirectory + "/only-results" }
        if smoke {
            if !arguments.contains("--size") { size = 0.05 }
            if !arguments.contains("--runs") { runs = 1 }
            if !arguments.contains("--out") { outputDirectory = workDirectory + "/smoke-results" }
            if !arguments.contains("--max-fences") { maxFences = 1_000 }
            if !arguments.contains("--max-devices") { maxDevices = 1_000 }
            if !arguments.contains("--max-vertices") { maxVertices = 1_000 }
            if !arguments.contains("--load-mib") { loadBytes = 1_048_576 }
        }
    }

    /// Powers of ten from `first` to `last`.
    static func decades(_ first: Int, _ last: Int) -> [Int] {
        var out: [Int] = []
        var n = first
        while n <= last { out.append(n); n *= 10 }
        return out
    }
}
