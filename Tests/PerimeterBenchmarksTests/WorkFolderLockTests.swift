import Foundation
import PerimeterBenchmarks
import PerimeterTestSupport
import Testing

/// `perimeter-bench` holds its work folder for the length of a run: a second run in the same folder is
/// refused with the folder and the way around it named, and the folder is free again once the first run
/// lets go.
@Suite struct WorkFolderLockTests {
    @Test func aSecondHoldOfTheSameFolderIsRefusedUntilTheFirstIsGiven() throws {
        let folder = TemporaryFolder(prefix: "bench-lock")
        var first: WorkFolderLock? = try WorkFolderLock(folder: folder.url.path)
        #expect(first != nil)
        do {
            _ = try WorkFolderLock(folder: folder.url.path)
            Issue.record("a second hold of a held folder was granted")
        } catch {
            #expect(error.folder == folder.url.path)
            #expect(error.description.contains("in use by another perimeter-bench (process \(getpid()))"))
            #expect(error.description.contains("--work DIR"))
        }
        first = nil
        _ = try WorkFolderLock(folder: folder.url.path)
    }

    @Test func foldersAreHeldApart() throws {
        let one = TemporaryFolder(prefix: "bench-lock"), two = TemporaryFolder(prefix: "bench-lock")
        let a = try WorkFolderLock(folder: one.url.path)
        let b = try WorkFolderLock(folder: two.url.path)
        withExtendedLifetime((a, b)) {}
    }

    @Test func aFolderThatCannotHoldTheLockFileIsNamed() {
        let folder = TemporaryFolder(prefix: "bench-lock")
        let missing = folder.path("no-such-folder")
        #expect(throws: WorkFolderLock.Refusal.self) { try WorkFolderLock(folder: missing) }
        do { _ = try WorkFolderLock(folder: missing) } catch {
            #expect(error.description.contains("cannot open \(missing)/\(WorkFolderLock.fileName)"))
        }
    }
}
