import Foundation
#if canImport(Glibc)
import Glibc
#endif
import PerimeterFences
import PerimeterGeoJSON
import PerimeterIndex
import PerimeterServer

/// Fence import: the workload's polygon fences as one FeatureCollection, loaded the way
/// `POST /v1/fences` loads them.
///
/// - The stages one at a time, in this process (CPU time, median of `runs`): reading the GeoJSON,
///   making and validating the fences (the ring self-intersection checks included), building the index.
/// - The handler's whole path in this process: `PerimeterAPI.importFeatures` (what the handler and
///   `perimeter serve --fences` call) into a fresh SQLite store, from the bytes to the committed store.
/// - End to end: the body POSTed over loopback to a `perimeter serve` child process on a fresh store;
///   the wall time from the first byte sent to the answer, and the server's CPU time for it.
public struct ImportBench {
    /// The section of the report.
    static let section = "Fence import (POST /v1/fences)"

    /// The FeatureCollection to import.
    let body: [UInt8]
    /// Where it came from, for the report.
    let origin: String
    /// Medians of this many runs.
    let runs: Int
    /// Scratch directory for the stores.
    let workDirectory: URL
    /// The benchmark's own executable (the `perimeter` binary is looked for beside it).
    let executable: String
    /// Whether this is the smoke run (a debug server binary is accepted).
    let smoke: Bool

    /// The body is the workload directory's `fences.geojson` when there is one (gen_workload.py's file
    /// as it is), else the workload's fences written as GeoJSON.
    public init(workload: Workload, workloadDirectory: String?, runs: Int, workDirectory: URL, executable: String,
                smoke: Bool) {
        if let directory = workloadDirectory,
           let data = FileManager.default.contents(atPath: URL(fileURLWithPath: directory).appendingPathComponent("fences.geojson").path) {
            body = Array(data)
            origin = "\(directory)/fences.geojson"
        } else {
            body = WorkloadFiles.geoJSON(workload.fences)
            origin = "the generated workload's fences"
        }
        self.runs = max(1, runs)
        self.workDirectory = workDirectory
        self.executable = executable
        self.smoke = smoke
    }

    /// Runs every measurement and adds figures and checks to `report`.
    public func run(into report: inout Report) {
        let mib = Double(body.count) / 1_048_576
        let section = "\(Self.section), \(Report.format(mib)) MiB"
        report.context.append(("fence import", "\(origin): \(Report.format(mib)) MiB"))

        // The stages alone.
        let read = Measure.repeated(runs: runs) { GeoJSONReader().read(body) }
        guard let object = read.result.object, !read.result.hasErrors else {
            report.check("fence import: the body reads as GeoJSON", passed: false,
                         read.result.problems.first.map { "\($0)" } ?? "no object"); return
        }
        let features = object.features.count
        report.add(section, "read GeoJSON (GeoJSONReader)", read.seconds, "s", higherIsBetter: false,
                   note: "\(features) features; CPU, median of \(runs)")
        let loader = FenceLoader(options: .init(defaultRadius: FenceLoader.Options.mapboxDefaultRadius))
        let loaded = Measure.repeated(runs: runs) { loader.load(read.result) }
        let fences = loaded.result.fences
        report.check("fence import: every feature makes a fence", passed: fences.count == features && !loaded.result.hasErrors,
                     "\(fences.count) of \(features) fences, \(loaded.result.problems.count) problems")
        report.add(section, "make and validate fences (FenceLoader)", loaded.seconds, "s", higherIsBetter: false,
                   note: "ring closure, coordinates, ring self-intersection")
        let regions = fences.map(\.region)
        let index = Measure.repeated(runs: runs) { RegionIndex(regions: regions) }
        _ = index.result
        report.add(section, "build the index (RegionIndex)", index.seconds, "s", higherIsBetter: false, note: "")

        // The handler's path, in this process.
        var handler: [Double] = [], handlerWall: [Double] = []
        for run in 0..<runs {
            switch importInProcess(run: run) {
            case .success(let (cpu, wall, count)):
                guard count == features else {
                    report.check("fence import: the handler imports every feature", passed: false, "\(count) of \(features)")
                    return
                }
                handler.append(cpu)
                handlerWall.append(wall)
            case .failure(let failure):
                report.check("fence import: the handler imports every feature", passed: false, failure.description)
                return
            }
        }
        report.check("fence import: the handler imports every feature", passed: true, "\(features) features")
        report.add(section, "importFeatures into SQLite (the handler's path)", Measure.median(handler), "s", higherIsBetter: false,
                   note: "CPU; wall \(Report.format(Measure.median(handlerWall))) s; goal < 1.5 s", reference: true)

        // End to end.
        guard let binary = serverBinary() else {
            report.context.append(("fence import over HTTP", "skipped: no perimeter binary beside perimeter-bench (swift build -c release --product perimeter)"))
            return
        }
        var wall: [Double] = [], serverCPU: [Double] = []
        for run in 0..<runs {
            switch importOverHTTP(binary: binary, run: run) {
            case .success(let (seconds, cpu)):
                wall.append(seconds)
                serverCPU.append(cpu)
            case .failure(let failure):
                report.check("fence import: POST /v1/fences answers 200", passed: false, failure.description)
                return
            }
        }
        report.check("fence import: POST /v1/fences answers 200", passed: true, "\(features) features imported")
        report.add(section, "POST /v1/fences to perimeter serve: wall time", Measure.median(wall), "s", higherIsBetter: false,
                   note: "loopback, fresh store; server CPU \(Report.format(Measure.median(serverCPU))) s; goal < 1.5 s")
    }

    /// Seconds the end-to-end step waits for the answer to its POST before it gives up (a loaded shared
    /// machine took 35–52 s for what takes 3 s alone).
    static let answerTimeout = 300

    /// A measurement that could not be made.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A fresh store path in the work directory; its files are removed first.
    func freshStore(_ name: String) -> String {
        let path = workDirectory.appendingPathComponent(name).path
        for suffix in ["", "-wal", "-shm", ".webhooks", ".webhooks-wal", ".webhooks-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
        return path
    }

    /// `importFeatures` on a server in this process with a fresh store: CPU and wall seconds, and the count.
    func importInProcess(run: Int) -> Result<(Double, Double, Int), Failure> {
        let path = freshStore("import-bench.sqlite")
        defer { _ = freshStore("import-bench.sqlite") }
        let configuration = ServerConfiguration(databasePath: path, address: "127.0.0.1", port: 0, threads: 1,
                                                api: APIConfiguration(heartbeatInterval: 15), drainTimeout: 2)
        let server: PerimeterServer
        do { server = try PerimeterServer(configuration: configuration) } catch {
            return .failure(Failure(description: "cannot start a server: \(error.message)"))
        }
        defer { server.stop() }
        let cpu0 = Measure.cpuSeconds(), wall0 = Measure.wallSeconds()
        do {
            let count = try server.api.importFeatures(body)
            return .success((Measure.cpuSeconds() - cpu0, Measure.wallSeconds() - wall0, count))
        } catch {
            return .failure(Failure(description: "\(error.status) \(error.detail)"))
        }
    }

    /// The body POSTed to a `perimeter serve` child: wall seconds to the answer, and the server's CPU seconds.
    func importOverHTTP(binary: String, run: Int) -> Result<(Double, Double), Failure> {
        let path = freshStore("import-bench-http.sqlite")
        defer { _ = freshStore("import-bench-http.sqlite") }
        let server: ServerProcess
        do {
            server = try ServerProcess(binary: binary, arguments: ["--db", path],
                                       logPath: workDirectory.appendingPathComponent("import-bench-serve.log").path, timeout: 60)
        } catch {
            return .failure(Failure(description: error.description))
        }
        defer { server.stop() }
        // The answer comes after the whole import: tens of seconds when other work shares the cores.
        guard let connection = LoadConnection(port: server.port, timeout: Self.answerTimeout) else {
            return .failure(Failure(description: "cannot connect to 127.0.0.1:\(server.port)"))
        }
        defer { connection.close() }
        let head = "POST /v1/fences HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        let before = CPUTime.of(pid: server.pid)
        let start = Measure.wallSeconds()
        guard connection.send(Array(head.utf8) + body), let answer = connection.receiveResponse() else {
            return .failure(Failure(description: "no answer from POST /v1/fences"))
        }
        let seconds = Measure.wallSeconds() - start
        let after = CPUTime.of(pid: server.pid)
        guard answer.status == 200 else {
            return .failure(Failure(description: "POST /v1/fences answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"))
        }
        return .success((seconds, (after.flatMap { a in before.map { (a - $0).total } }) ?? .nan))
    }

    /// The `perimeter` binary beside this one (release), or the debug one in a smoke run.
    func serverBinary() -> String? {
        let directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        var candidates = [directory.appendingPathComponent("perimeter").path]
        if smoke {
            candidates.append(directory.deletingLastPathComponent().appendingPathComponent("debug/perimeter").path)
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
