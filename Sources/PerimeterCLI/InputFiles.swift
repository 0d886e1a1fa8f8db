import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterTracks

/// Reading the files a command names: all file I/O of the CLI happens here.
enum InputFiles {
    /// The bytes of the file at `path`, or a one-line error naming it.
    static func bytes(_ path: String, what: String) throws -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandLineError.noInput("\(what) '\(path)' does not exist")
        }
        guard !isDirectory.boolValue else { throw CommandLineError.noInput("\(what) '\(path)' is a directory, not a file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandLineError.noInput("\(what) '\(path)' cannot be read (permissions?)")
        }
        return [UInt8](data)
    }

    /// A fence file read and checked: the fences that loaded and every problem, as printable lines.
    struct FenceFile {
        var fences: [Fence]
        var errors: [String]
        var warnings: [String]
    }

    /// Reads, parses and loads the fences in `path`, collecting problems of both the GeoJSON and the
    /// fence level. With `strict`, warnings count as errors.
    static func fences(_ path: String, options: FenceLoader.Options) throws -> FenceFile {
        let bytes = try bytes(path, what: "fence file")
        let read = GeoJSONReader().read(bytes)
        var file = FenceFile(fences: [], errors: [], warnings: [])
        for problem in read.problems {
            if problem.severity == .error || options.strict {
                file.errors.append("\(path):\(problem)")
            } else {
                file.warnings.append("\(path):\(problem)")
            }
        }
        guard let object = read.object else {
            if file.errors.isEmpty { file.errors.append("\(path): not a GeoJSON document") }
            return file
        }
        let loaded = FenceLoader(options: options).load(object, featureIndices: read.featureIndices)
        file.fences = loaded.fences
        for problem in loaded.problems {
            if problem.severity == .error {
                file.errors.append("\(path): \(problem)")
            } else {
                file.warnings.append("\(path): \(problem)")
            }
        }
        return file
    }

    /// Reads every track file; each file's warnings come back as printable lines.
    static func tracks(_ paths: [String], reader: TrackReader) throws -> (updates: [LocationUpdate], warnings: [String]) {
        var updates: [LocationUpdate] = []
        var warnings: [String] = []
        for path in paths {
            let bytes = try bytes(path, what: "track file")
            let source = (path as NSString).lastPathComponent
            do {
                let result = try reader.read(bytes, source: source)
                updates += result.updates
                warnings += result.warnings.map { "\($0)" }
                if result.updates.isEmpty {
                    throw CommandLineError.data("track file '\(path)' holds no location updates")
                }
            } catch let problem as TrackProblem {
                throw CommandLineError.data("\(problem)")
            }
        }
        return (updates, warnings)
    }
}
