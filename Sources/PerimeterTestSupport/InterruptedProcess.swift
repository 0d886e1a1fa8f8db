import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs `process` with its standard output and error in one pipe until it has printed `marker`, then
/// interrupts it (SIGINT, as Ctrl-C) and returns everything it printed up to its exit. The reads run
/// off Swift's pool, as they block. A process that ends before printing `marker` returns what it printed.
public func outputUntilInterrupted(_ process: Process, after marker: String) async throws -> String {
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    return try await offThePool { () -> String in
        var text = ""
        let reader = output.fileHandleForReading
        while !text.contains(marker) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        // A process that does not stop on SIGINT must fail its test, not hang the suite: ask again a few
        // times, as a user presses Ctrl-C again, then kill -9 (the test then sees a failed exit status).
        for _ in 0..<5 where process.isRunning {
            process.interrupt()
            _ = waitUntil(seconds: 5) { !process.isRunning }
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }
}
