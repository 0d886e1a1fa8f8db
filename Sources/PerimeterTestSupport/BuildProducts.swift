import Foundation

/// What this build put beside the running test bundle: executables, and the compiled modules a test
/// can type-check a program against.
public enum BuildProducts {
    /// The first `name` in the test bundle's folder, or in one of the three folders above it, that
    /// `accept` takes; `nil` when there is none. SwiftPM's layout differs between platforms and
    /// scratch paths (`.build/debug`, `.build/<triple>/debug`, `.build-asan/…`), hence the search.
    public static func locate(_ name: String, where accept: (URL) -> Bool) -> URL? {
        var folders: [URL] = []
        if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
        folders.append(Bundle.main.bundleURL.deletingLastPathComponent())
        folders.append(Bundle.main.bundleURL)
        if let first = CommandLine.arguments.first {
            folders.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        for folder in folders {
            var candidate = folder
            for _ in 0..<4 {
                let url = candidate.appendingPathComponent(name)
                if accept(url) { return url }
                candidate = candidate.deletingLastPathComponent()
            }
        }
        return nil
    }
}
