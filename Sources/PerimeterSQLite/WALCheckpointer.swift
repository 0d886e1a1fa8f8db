import CSQLite
import Foundation

/// Checkpoints a database's write-ahead log on a background thread, so that commits do not wait for
/// the checkpoint's flushes to disk.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000 pages):
/// with `synchronous = NORMAL` that commit then waits for two `fdatasync` calls, ≈ 20 ms on this
/// machine against ≈ 70 µs for the commit itself, and it happens every few hundred small commits
/// (measured: 40 % of a single-update request's time). Instead, the writer's connection only
/// notes the log's size after each commit (``attach(to:)`` installs a WAL hook, which also turns the
/// automatic checkpoint off); past ``threshold`` frames it wakes this checkpointer, which runs
/// PASSIVE checkpoints on its own connection: they copy committed frames into the database while the
/// writer goes on, and take no lock the writer needs.
///
/// Under sustained writes a passive checkpoint never reaches the end of the log, so the log cannot
/// start over and would grow. Past ``limit`` frames the writer therefore runs one RESTART checkpoint
/// itself (``checkpointIfOverLimit(_:)``), most of whose copying the background has done already.
/// The log stays below about `limit` pages.
///
/// Checkpoint failures lose nothing (the frames stay in the log and the next checkpoint copies them).
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: `requested`, `stopping`, `running`, `checkpoints` and `lastFailure` are guarded by
    // `condition`; `frames` is only touched by the writer with its connection's lock held (in the WAL
    // hook and after a commit); `database` is set before the thread starts and then used by it alone.
    /// Frames in the log after which the background checkpoint starts.
    let threshold: Int
    /// Frames in the log after which the writer checkpoints (RESTART) itself.
    let limit: Int
    private let path: String
    private let condition = NSCondition()
    private var requested = false
    private var stopping = false
    private var running = false
    /// The last background checkpoint's failure, if it failed (diagnostics).
    private var lastFailure: DatabaseError?
    /// Frames in the log after the writer's last commit.
    private var frames = 0
    /// Frames in the log when the background checkpoint was last requested.
    private var framesAtRequest = 0
    /// Background checkpoints run so far.
    private var checkpoints = 0
    /// The checkpointer's own connection, used by its thread only.
    private var database: Database?

    /// A checkpointer for the database at `path` (its own connection is opened by ``start()``).
    init(path: String, threshold: Int = 1_000, limit: Int = 16_000) {
        self.path = path
        self.threshold = max(1, threshold)
        self.limit = max(self.threshold, limit)
    }

    /// Opens the checkpointer's connection and starts its thread.
    func start() throws(DatabaseError) {
        database = try Database(path: path)
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = "perimeter-wal-checkpoint"
        thread.start()
    }

    /// Makes the writer's connection report its log size here after every commit, instead of
    /// checkpointing in the commit. The checkpointer must outlive the connection's use of the hook
    /// (call ``detach(from:)`` before it is released).
    func attach(to writer: Database) {
        sqlite3_wal_hook(writer.handle, Self.hook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Removes the hook installed by ``attach(to:)``.
    func detach(from writer: Database) {
        guard writer.handle != nil else { return }
        sqlite3_wal_hook(writer.handle, nil, nil)
    }

    /// Called by SQLite on the writer's thread after each commit, with the frames now in the log.
    private static let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
        context, _, _, frames in
        guard let context else { return SQLITE_OK }
        Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: Int(frames))
        return SQLITE_OK
    }

    private func committed(frames: Int) {
        if frames < self.frames { framesAtRequest = 0 }  // the log started over
        self.frames = frames
        guard frames - framesAtRequest >= threshold else { return }
        framesAtRequest = frames
        condition.lock()
        if !requested {
            requested = true
            condition.signal()
        }
        condition.unlock()
    }

    /// Runs a RESTART checkpoint on `writer` when the log has grown past ``limit``; call after a
    /// commit, on the writer's thread. A busy database (a reader, or the background checkpoint at
    /// work) makes it wait up to the connection's busy timeout, then leaves it for a later commit.
    func checkpointIfOverLimit(_ writer: Database) {
        guard frames >= limit, let handle = writer.handle else { return }
        var logFrames: Int32 = 0, copied: Int32 = 0
        if sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_RESTART, &logFrames, &copied) == SQLITE_OK {
            frames = 0
        }
    }

    /// Stops the thread (after the checkpoint at work, if any) and closes its connection.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    /// Whether the thread is running (between ``start()`` and ``stop()``).
    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    /// Background checkpoints run so far, and the last one's failure (for tests and diagnostics).
    var status: (checkpoints: Int, lastFailure: DatabaseError?) {
        condition.lock()
        defer { condition.unlock() }
        return (checkpoints, lastFailure)
    }

    private func run() {
        guard let database else { return }
        while true {
            condition.lock()
            while !requested && !stopping { condition.wait() }
            if stopping {
                database.close()
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            requested = false
            condition.unlock()

            var logFrames: Int32 = 0, copied: Int32 = 0
            let code = sqlite3_wal_checkpoint_v2(database.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
            condition.lock()
            checkpoints += 1
            lastFailure = code == SQLITE_OK ? nil : database.error(code)
            condition.unlock()
        }
    }
}
