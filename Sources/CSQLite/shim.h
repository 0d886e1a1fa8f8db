// The parts of SQLite's C API that Swift cannot call directly.
#ifndef PERIMETER_CSQLITE_SHIM_H
#define PERIMETER_CSQLITE_SHIM_H

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

/// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot express: binds with it
/// make SQLite copy the value before the call returns.
static inline int perimeter_sqlite3_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/// The same for a BLOB (a zero-length one needs a pointer that is not null, which is not read).
static inline int perimeter_sqlite3_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

/// sqlite3_db_config is variadic; this is its SQLITE_DBCONFIG_DEFENSIVE form.
static inline int perimeter_sqlite3_db_config_defensive(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0);
}

// MARK: - Disk faults, for tests (docs/reliability.md, "Faults of the disk")
//
// A VFS that forwards everything to the default one, except that writes to files whose path starts
// with an armed prefix fail with a chosen error (SQLITE_FULL for a full disk, SQLITE_IOERR_WRITE for a
// failing one) once a budget of successful writes is spent. Tests install it once (it becomes the
// default VFS, so connections opened later go through it; files outside the prefix are untouched) and
// arm it around a store in their own folder. The state lives in the VFS's pAppData, found through
// SQLite's registry, so every copy of these static functions shares it.

typedef struct perimeter_fault_state {
    sqlite3_vfs *base;
    char prefix[1024];
    long long writes_left;   // -1: no fault; 0: every write fails; n: n writes succeed first
    int error;               // the result code of a failed write
    long long faults;        // writes failed so far
} perimeter_fault_state;

typedef struct perimeter_fault_file {
    sqlite3_file file;       // pMethods: perimeter_fault_methods
    sqlite3_file *real;      // the base VFS's file, in the same allocation after this struct
    perimeter_fault_state *state;
    int armed;               // the path starts with the prefix
} perimeter_fault_file;

#define PERIMETER_FAULT_VFS "perimeter-faults"
#define PERIMETER_REAL(f) (((perimeter_fault_file *)(f))->real)

static inline perimeter_fault_state *perimeter_fault_state_get(void) {
    sqlite3_vfs *vfs = sqlite3_vfs_find(PERIMETER_FAULT_VFS);
    return vfs ? (perimeter_fault_state *)vfs->pAppData : 0;
}

static int perimeter_fault_close(sqlite3_file *f) {
    int rc = PERIMETER_REAL(f)->pMethods->xClose(PERIMETER_REAL(f));
    return rc;
}
static int perimeter_fault_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    return PERIMETER_REAL(f)->pMethods->xRead(PERIMETER_REAL(f), buffer, amount, offset);
}
/// Whether this write (or growth) must fail: the file is armed and the budget is spent.
static int perimeter_fault_take(sqlite3_file *f) {
    perimeter_fault_file *file = (perimeter_fault_file *)f;
    if (!file->armed) return 0;
    perimeter_fault_state *state = file->state;
    long long left = __atomic_load_n(&state->writes_left, __ATOMIC_SEQ_CST);
    while (left > 0) {
        if (__atomic_compare_exchange_n(&state->writes_left, &left, left - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return 0;
    }
    if (left < 0) return 0;
    __atomic_add_fetch(&state->faults, 1, __ATOMIC_SEQ_CST);
    return 1;
}
static int perimeter_fault_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    if (perimeter_fault_take(f)) return ((perimeter_fault_file *)f)->state->error;
    return PERIMETER_REAL(f)->pMethods->xWrite(PERIMETER_REAL(f), buffer, amount, offset);
}
static int perimeter_fault_truncate(sqlite3_file *f, sqlite3_int64 size) {
    return PERIMETER_REAL(f)->pMethods->xTruncate(PERIMETER_REAL(f), size);
}
static int perimeter_fault_sync(sqlite3_file *f, int flags) {
    return PERIMETER_REAL(f)->pMethods->xSync(PERIMETER_REAL(f), flags);
}
static int perimeter_fault_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    return PERIMETER_REAL(f)->pMethods->xFileSize(PERIMETER_REAL(f), size);
}
static int perimeter_fault_lock(sqlite3_file *f, int level) {
    return PERIMETER_REAL(f)->pMethods->xLock(PERIMETER_REAL(f), level);
}
static int perimeter_fault_unlock(sqlite3_file *f, int level) {
    return PERIMETER_REAL(f)->pMethods->xUnlock(PERIMETER_REAL(f), level);
}
static int perimeter_fault_check_reserved(sqlite3_file *f, int *out) {
    return PERIMETER_REAL(f)->pMethods->xCheckReservedLock(PERIMETER_REAL(f), out);
}
static int perimeter_fault_file_control(sqlite3_file *f, int op, void *arg) {
    return PERIMETER_REAL(f)->pMethods->xFileControl(PERIMETER_REAL(f), op, arg);
}
static int perimeter_fault_sector_size(sqlite3_file *f) {
    return PERIMETER_REAL(f)->pMethods->xSectorSize(PERIMETER_REAL(f));
}
static int perimeter_fault_device(sqlite3_file *f) {
    return PERIMETER_REAL(f)->pMethods->xDeviceCharacteristics(PERIMETER_REAL(f));
}
static int perimeter_fault_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return PERIMETER_REAL(f)->pMethods->xShmMap(PERIMETER_REAL(f), page, size, extend, out);
}
static int perimeter_fault_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    return PERIMETER_REAL(f)->pMethods->xShmLock(PERIMETER_REAL(f), offset, n, flags);
}
static void perimeter_fault_shm_barrier(sqlite3_file *f) {
    PERIMETER_REAL(f)->pMethods->xShmBarrier(PERIMETER_REAL(f));
}
static int perimeter_fault_shm_unmap(sqlite3_file *f, int delete_flag) {
    return PERIMETER_REAL(f)->pMethods->xShmUnmap(PERIMETER_REAL(f), delete_flag);
}
static int perimeter_fault_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    return PERIMETER_REAL(f)->pMethods->xFetch(PERIMETER_REAL(f), offset, amount, out);
}
static int perimeter_fault_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *pointer) {
    return PERIMETER_REAL(f)->pMethods->xUnfetch(PERIMETER_REAL(f), offset, pointer);
}

static const sqlite3_io_methods perimeter_fault_methods = {
    3, perimeter_fault_close, perimeter_fault_read, perimeter_fault_write, perimeter_fault_truncate,
    perimeter_fault_sync, perimeter_fault_file_size, perimeter_fault_lock, perimeter_fault_unlock,
    perimeter_fault_check_reserved, perimeter_fault_file_control, perimeter_fault_sector_size,
    perimeter_fault_device, perimeter_fault_shm_map, perimeter_fault_shm_lock, perimeter_fault_shm_barrier,
    perimeter_fault_shm_unmap, perimeter_fault_fetch, perimeter_fault_unfetch,
};

static int perimeter_fault_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out_flags) {
    perimeter_fault_state *state = (perimeter_fault_state *)vfs->pAppData;
    perimeter_fault_file *file = (perimeter_fault_file *)f;
    file->real = (sqlite3_file *)(file + 1);
    file->state = state;
    file->armed = name != 0 && state->prefix[0] != 0 && strncmp(name, state->prefix, strlen(state->prefix)) == 0;
    file->file.pMethods = 0;
    int rc = state->base->xOpen(state->base, name, file->real, flags, out_flags);
    // SQLite calls xClose whenever pMethods is set, even after a failed open: set it only when the
    // real file has methods to close.
    if (file->real->pMethods) file->file.pMethods = &perimeter_fault_methods;
    return rc;
}

#define PERIMETER_FAULT_FORWARD(vfs) (((perimeter_fault_state *)(vfs)->pAppData)->base)
static int perimeter_fault_delete(sqlite3_vfs *vfs, const char *name, int sync) {
    return PERIMETER_FAULT_FORWARD(vfs)->xDelete(PERIMETER_FAULT_FORWARD(vfs), name, sync);
}
static int perimeter_fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    return PERIMETER_FAULT_FORWARD(vfs)->xAccess(PERIMETER_FAULT_FORWARD(vfs), name, flags, out);
}
static int perimeter_fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    return PERIMETER_FAULT_FORWARD(vfs)->xFullPathname(PERIMETER_FAULT_FORWARD(vfs), name, size, out);
}
static void *perimeter_fault_dl_open(sqlite3_vfs *vfs, const char *name) {
    return PERIMETER_FAULT_FORWARD(vfs)->xDlOpen(PERIMETER_FAULT_FORWARD(vfs), name);
}
static void perimeter_fault_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    PERIMETER_FAULT_FORWARD(vfs)->xDlError(PERIMETER_FAULT_FORWARD(vfs), size, out);
}
static void (*perimeter_fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    return PERIMETER_FAULT_FORWARD(vfs)->xDlSym(PERIMETER_FAULT_FORWARD(vfs), handle, symbol);
}
static void perimeter_fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    PERIMETER_FAULT_FORWARD(vfs)->xDlClose(PERIMETER_FAULT_FORWARD(vfs), handle);
}
static int perimeter_fault_randomness(sqlite3_vfs *vfs, int size, char *out) {
    return PERIMETER_FAULT_FORWARD(vfs)->xRandomness(PERIMETER_FAULT_FORWARD(vfs), size, out);
}
static int perimeter_fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    return PERIMETER_FAULT_FORWARD(vfs)->xSleep(PERIMETER_FAULT_FORWARD(vfs), microseconds);
}
static int perimeter_fault_current_time(sqlite3_vfs *vfs, double *out) {
    return PERIMETER_FAULT_FORWARD(vfs)->xCurrentTime(PERIMETER_FAULT_FORWARD(vfs), out);
}
static int perimeter_fault_last_error(sqlite3_vfs *vfs, int size, char *out) {
    return PERIMETER_FAULT_FORWARD(vfs)->xGetLastError(PERIMETER_FAULT_FORWARD(vfs), size, out);
}
static int perimeter_fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    return PERIMETER_FAULT_FORWARD(vfs)->xCurrentTimeInt64(PERIMETER_FAULT_FORWARD(vfs), out);
}

/// Installs the fault VFS as the default (once; later calls do nothing). Returns an SQLite result code.
static inline int perimeter_fault_vfs_install(void) {
    sqlite3_initialize();
    if (sqlite3_vfs_find(PERIMETER_FAULT_VFS)) return SQLITE_OK;
    sqlite3_vfs *base = sqlite3_vfs_find(0);
    if (!base) return SQLITE_ERROR;
    sqlite3_vfs *vfs = (sqlite3_vfs *)sqlite3_malloc(sizeof(sqlite3_vfs));
    perimeter_fault_state *state = (perimeter_fault_state *)sqlite3_malloc(sizeof(perimeter_fault_state));
    if (!vfs || !state) return SQLITE_NOMEM;
    memset(state, 0, sizeof *state);
    state->base = base;
    state->writes_left = -1;
    state->error = SQLITE_FULL;
    *vfs = (sqlite3_vfs){
        2, (int)(sizeof(perimeter_fault_file) + base->szOsFile), base->mxPathname, 0, PERIMETER_FAULT_VFS, state,
        perimeter_fault_open, perimeter_fault_delete, perimeter_fault_access, perimeter_fault_full_pathname,
        perimeter_fault_dl_open, perimeter_fault_dl_error, perimeter_fault_dl_sym, perimeter_fault_dl_close,
        perimeter_fault_randomness, perimeter_fault_sleep, perimeter_fault_current_time, perimeter_fault_last_error,
        perimeter_fault_current_time_int64, 0, 0, 0,
    };
    return sqlite3_vfs_register(vfs, 1);
}

/// Arms the faults for files under `prefix` (opened after this call): `writes` more writes succeed,
/// then each fails with `error`; `writes` -1 disarms (writes succeed again, also for open files).
static inline void perimeter_fault_vfs_arm(const char *prefix, long long writes, int error) {
    perimeter_fault_state *state = perimeter_fault_state_get();
    if (!state) return;
    if (prefix) {
        strncpy(state->prefix, prefix, sizeof state->prefix - 1);
        state->prefix[sizeof state->prefix - 1] = 0;
    }
    state->error = error;
    __atomic_store_n(&state->writes_left, writes, __ATOMIC_SEQ_CST);
}

/// How many writes the fault VFS has failed since it was installed.
static inline long long perimeter_fault_vfs_faults(void) {
    perimeter_fault_state *state = perimeter_fault_state_get();
    return state ? __atomic_load_n(&state->faults, __ATOMIC_SEQ_CST) : 0;
}

// MARK: - Coalesced writes, for bulk commits (docs/service.md, "Bulk commits")
//
// A VFS that forwards everything to the default VFS of the moment (so the fault VFS above, when a test
// installs it, still sees every write), except that a main database file can be told to gather
// consecutive writes in a buffer (PERIMETER_FCNTL_COALESCE). A bulk commit under a rollback journal
// writes tens of thousands of new 1 KiB pages one after the other; each was a pwrite of its own, most
// of the commit's system time. Gathered, they reach the file in writes of up to 64 KiB.
//
// A write-ahead log always gathers. SQLite appends each frame as two writes (its 24-byte header, then
// the page), so a commit of a few hundred 1 KiB pages made twice as many system calls. The frame that
// ends a commit carries the database's size in its header (bytes 4-7, zero in every other frame):
// after that frame's page, the log writes out everything gathered, inside SQLite's write of the page.
// So every byte of a commit is in the file before SQLite publishes the commit (in the log's index)
// and before COMMIT returns — as without gathering — and a failed write fails the commit.
//
// Buffered bytes only ever reach the file later than SQLite asked, never earlier, and always before
// any other operation on the file — a read, a size, a truncation, a sync, a lock change, a file
// control, the shared memory, a close — so every operation sees the file as SQLite wrote it, and a
// sync still covers every write made before it. A write that fails while being flushed fails the
// operation that flushed it (the commit's sync, for a bulk commit, which then rolls back).

typedef struct perimeter_bulk_file {
    sqlite3_file file;         // pMethods: perimeter_bulk_methods
    sqlite3_file *real;        // the default VFS's file (sqlite3_malloc'd)
    int main_db;               // opened as SQLITE_OPEN_MAIN_DB: coalesces when told to
    int wal;                   // opened as SQLITE_OPEN_WAL: coalesces always, up to each commit frame
    int flush_after_next;      // a WAL's last write was a commit frame's header: flush after its page
    unsigned char *buffer;     // non-null while coalescing
    int used;                  // bytes in buffer
    sqlite3_int64 offset;      // where buffer[0] goes in the file
} perimeter_bulk_file;

#define PERIMETER_BULK_VFS "perimeter-bulk"
/// File control (an opcode no SQLite file control uses): the argument points to an int, 1 to start
/// coalescing writes, 0 to flush and stop, PERIMETER_COALESCE_UNLESS_ON to start unless the file
/// already coalesces (the int is then set to 1 if this call started it, else 0). Files that cannot
/// coalesce answer SQLITE_NOTFOUND.
#define PERIMETER_FCNTL_COALESCE 0x50524d01
#define PERIMETER_COALESCE_UNLESS_ON 2
/// 64 KiB: the unix VFS writes at most 128 KiB − 1 bytes in one call (it masks larger lengths, and a
/// write it cuts to nothing reports a full disk).
#define PERIMETER_BULK_BUFFER (1 << 16)
#define PERIMETER_BULK(f) ((perimeter_bulk_file *)(f))
#define PERIMETER_BULK_REAL(f) (PERIMETER_BULK(f)->real)

static int perimeter_bulk_flush(sqlite3_file *f) {
    perimeter_bulk_file *file = PERIMETER_BULK(f);
    file->flush_after_next = 0;
    if (file->used == 0) return SQLITE_OK;
    int used = file->used;
    file->used = 0;
    return file->real->pMethods->xWrite(file->real, file->buffer, used, file->offset);
}
/// Flushes; on failure, returns from the calling method with the write's error.
#define PERIMETER_BULK_FLUSH(f) do { int flushed = perimeter_bulk_flush(f); if (flushed != SQLITE_OK) return flushed; } while (0)

static int perimeter_bulk_close(sqlite3_file *f) {
    perimeter_bulk_file *file = PERIMETER_BULK(f);
    int flushed = perimeter_bulk_flush(f);
    int rc = file->real->pMethods->xClose(file->real);
    sqlite3_free(file->buffer);
    file->buffer = 0;
    sqlite3_free(file->real);
    file->real = 0;
    return flushed != SQLITE_OK ? flushed : rc;
}
static int perimeter_bulk_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xRead(PERIMETER_BULK_REAL(f), buffer, amount, offset);
}
/// The size of a WAL frame's header; a frame is written as this header, then its page.
#define PERIMETER_WAL_FRAME_HEADER 24

static int perimeter_bulk_write(sqlite3_file *f, const void *data, int amount, sqlite3_int64 offset) {
    perimeter_bulk_file *file = PERIMETER_BULK(f);
    if (file->buffer) {
        // A WAL write right after a commit frame's header is that frame's page: the commit's last bytes.
        int ends_commit = file->flush_after_next;
        const unsigned char *header = (const unsigned char *)data;
        int commit_header = file->wal && amount == PERIMETER_WAL_FRAME_HEADER
            && (header[4] | header[5] | header[6] | header[7]) != 0;
        if (file->used > 0 && offset == file->offset + file->used && amount <= PERIMETER_BULK_BUFFER - file->used) {
            memcpy(file->buffer + file->used, data, (size_t)amount);
            file->used += amount;
        } else {
            PERIMETER_BULK_FLUSH(f);
            if (amount >= PERIMETER_BULK_BUFFER) {
                file->flush_after_next = commit_header;
                return file->real->pMethods->xWrite(file->real, data, amount, offset);
            }
            memcpy(file->buffer, data, (size_t)amount);
            file->used = amount;
            file->offset = offset;
        }
        if (ends_commit) return perimeter_bulk_flush(f);
        file->flush_after_next = commit_header;
        return SQLITE_OK;
    }
    return file->real->pMethods->xWrite(file->real, data, amount, offset);
}
static int perimeter_bulk_truncate(sqlite3_file *f, sqlite3_int64 size) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xTruncate(PERIMETER_BULK_REAL(f), size);
}
static int perimeter_bulk_sync(sqlite3_file *f, int flags) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xSync(PERIMETER_BULK_REAL(f), flags);
}
static int perimeter_bulk_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xFileSize(PERIMETER_BULK_REAL(f), size);
}
static int perimeter_bulk_lock(sqlite3_file *f, int level) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xLock(PERIMETER_BULK_REAL(f), level);
}
static int perimeter_bulk_unlock(sqlite3_file *f, int level) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xUnlock(PERIMETER_BULK_REAL(f), level);
}
static int perimeter_bulk_check_reserved(sqlite3_file *f, int *out) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xCheckReservedLock(PERIMETER_BULK_REAL(f), out);
}
static int perimeter_bulk_file_control(sqlite3_file *f, int op, void *arg) {
    perimeter_bulk_file *file = PERIMETER_BULK(f);
    if (op == PERIMETER_FCNTL_COALESCE) {
        if (!file->main_db) return SQLITE_NOTFOUND;   // (a WAL gathers always)
        if (*(int *)arg == PERIMETER_COALESCE_UNLESS_ON) {
            *(int *)arg = file->buffer ? 0 : 1;
            if (file->buffer) return SQLITE_OK;
        }
        if (*(int *)arg) {
            if (!file->buffer) file->buffer = (unsigned char *)sqlite3_malloc(PERIMETER_BULK_BUFFER);
            return file->buffer ? SQLITE_OK : SQLITE_NOMEM;
        }
        int flushed = perimeter_bulk_flush(f);
        sqlite3_free(file->buffer);
        file->buffer = 0;
        return flushed;
    }
    PERIMETER_BULK_FLUSH(f);
    return file->real->pMethods->xFileControl(file->real, op, arg);
}
static int perimeter_bulk_sector_size(sqlite3_file *f) {
    return PERIMETER_BULK_REAL(f)->pMethods->xSectorSize(PERIMETER_BULK_REAL(f));
}
static int perimeter_bulk_device(sqlite3_file *f) {
    return PERIMETER_BULK_REAL(f)->pMethods->xDeviceCharacteristics(PERIMETER_BULK_REAL(f));
}
static int perimeter_bulk_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xShmMap(PERIMETER_BULK_REAL(f), page, size, extend, out);
}
static int perimeter_bulk_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xShmLock(PERIMETER_BULK_REAL(f), offset, n, flags);
}
static void perimeter_bulk_shm_barrier(sqlite3_file *f) {
    PERIMETER_BULK_REAL(f)->pMethods->xShmBarrier(PERIMETER_BULK_REAL(f));
}
static int perimeter_bulk_shm_unmap(sqlite3_file *f, int delete_flag) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xShmUnmap(PERIMETER_BULK_REAL(f), delete_flag);
}
static int perimeter_bulk_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    PERIMETER_BULK_FLUSH(f);
    return PERIMETER_BULK_REAL(f)->pMethods->xFetch(PERIMETER_BULK_REAL(f), offset, amount, out);
}
static int perimeter_bulk_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *pointer) {
    return PERIMETER_BULK_REAL(f)->pMethods->xUnfetch(PERIMETER_BULK_REAL(f), offset, pointer);
}

static const sqlite3_io_methods perimeter_bulk_methods = {
    3, perimeter_bulk_close, perimeter_bulk_read, perimeter_bulk_write, perimeter_bulk_truncate,
    perimeter_bulk_sync, perimeter_bulk_file_size, perimeter_bulk_lock, perimeter_bulk_unlock,
    perimeter_bulk_check_reserved, perimeter_bulk_file_control, perimeter_bulk_sector_size,
    perimeter_bulk_device, perimeter_bulk_shm_map, perimeter_bulk_shm_lock, perimeter_bulk_shm_barrier,
    perimeter_bulk_shm_unmap, perimeter_bulk_fetch, perimeter_bulk_unfetch,
};

static int perimeter_bulk_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    perimeter_bulk_file *file = PERIMETER_BULK(f);
    file->file.pMethods = 0;
    file->buffer = 0;
    file->used = 0;
    file->offset = 0;
    file->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
    file->wal = (flags & SQLITE_OPEN_WAL) != 0;
    file->flush_after_next = 0;
    sqlite3_vfs *base = sqlite3_vfs_find(0);
    if (!base) return SQLITE_ERROR;
    file->real = (sqlite3_file *)sqlite3_malloc(base->szOsFile);
    if (!file->real) return SQLITE_NOMEM;
    memset(file->real, 0, (size_t)base->szOsFile);
    int rc = base->xOpen(base, name, file->real, flags, out_flags);
    // SQLite calls xClose whenever pMethods is set, even after a failed open. Every method used
    // forwards to a version-3 method, so the file beneath must have them (the unix VFS's do).
    if (file->real->pMethods && file->real->pMethods->iVersion >= 3) {
        file->file.pMethods = &perimeter_bulk_methods;
        // Without the buffer the log writes each frame as SQLite asks (still correct, only slower).
        if (file->wal) file->buffer = (unsigned char *)sqlite3_malloc(PERIMETER_BULK_BUFFER);
    } else {
        if (file->real->pMethods) file->real->pMethods->xClose(file->real);
        sqlite3_free(file->real);
        file->real = 0;
        if (rc == SQLITE_OK) rc = SQLITE_CANTOPEN;
    }
    return rc;
}

#define PERIMETER_BULK_BASE sqlite3_vfs_find(0)
static int perimeter_bulk_delete(sqlite3_vfs *vfs, const char *name, int sync) {
    (void)vfs; return PERIMETER_BULK_BASE->xDelete(PERIMETER_BULK_BASE, name, sync);
}
static int perimeter_bulk_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs; return PERIMETER_BULK_BASE->xAccess(PERIMETER_BULK_BASE, name, flags, out);
}
static int perimeter_bulk_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs; return PERIMETER_BULK_BASE->xFullPathname(PERIMETER_BULK_BASE, name, size, out);
}
static void *perimeter_bulk_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs; return PERIMETER_BULK_BASE->xDlOpen(PERIMETER_BULK_BASE, name);
}
static void perimeter_bulk_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs; PERIMETER_BULK_BASE->xDlError(PERIMETER_BULK_BASE, size, out);
}
static void (*perimeter_bulk_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs; return PERIMETER_BULK_BASE->xDlSym(PERIMETER_BULK_BASE, handle, symbol);
}
static void perimeter_bulk_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs; PERIMETER_BULK_BASE->xDlClose(PERIMETER_BULK_BASE, handle);
}
static int perimeter_bulk_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs; return PERIMETER_BULK_BASE->xRandomness(PERIMETER_BULK_BASE, size, out);
}
static int perimeter_bulk_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs; return PERIMETER_BULK_BASE->xSleep(PERIMETER_BULK_BASE, microseconds);
}
static int perimeter_bulk_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs; return PERIMETER_BULK_BASE->xCurrentTime(PERIMETER_BULK_BASE, out);
}
static int perimeter_bulk_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs; return PERIMETER_BULK_BASE->xGetLastError(PERIMETER_BULK_BASE, size, out);
}
static int perimeter_bulk_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs; return PERIMETER_BULK_BASE->xCurrentTimeInt64(PERIMETER_BULK_BASE, out);
}

/// Registers the coalescing VFS (not as the default; once, later calls do nothing). Returns an SQLite
/// result code. Open a connection with the VFS name PERIMETER_BULK_VFS to use it.
static inline int perimeter_bulk_vfs_register(void) {
    sqlite3_initialize();
    if (sqlite3_vfs_find(PERIMETER_BULK_VFS)) return SQLITE_OK;
    sqlite3_vfs *base = sqlite3_vfs_find(0);
    if (!base || base->iVersion < 2) return SQLITE_ERROR;
    sqlite3_vfs *vfs = (sqlite3_vfs *)sqlite3_malloc(sizeof(sqlite3_vfs));
    if (!vfs) return SQLITE_NOMEM;
    *vfs = (sqlite3_vfs){
        2, (int)sizeof(perimeter_bulk_file), base->mxPathname, 0, PERIMETER_BULK_VFS, 0,
        perimeter_bulk_open, perimeter_bulk_delete, perimeter_bulk_access, perimeter_bulk_full_pathname,
        perimeter_bulk_dl_open, perimeter_bulk_dl_error, perimeter_bulk_dl_sym, perimeter_bulk_dl_close,
        perimeter_bulk_randomness, perimeter_bulk_sleep, perimeter_bulk_current_time, perimeter_bulk_last_error,
        perimeter_bulk_current_time_int64, 0, 0, 0,
    };
    return sqlite3_vfs_register(vfs, 0);
}

/// The VFS's name, for sqlite3_open_v2 (a macro string is not visible to Swift).
static inline const char *perimeter_bulk_vfs_name(void) { return PERIMETER_BULK_VFS; }

/// Starts (on = 1) or flushes and stops (on = 0) coalescing the writes to `db`'s main file. Returns
/// SQLITE_NOTFOUND when the file was not opened through the coalescing VFS.
static inline int perimeter_bulk_coalesce(sqlite3 *db, int on) {
    return sqlite3_file_control(db, "main", PERIMETER_FCNTL_COALESCE, &on);
}

/// SQLite's automatic checkpoint (`PRAGMA wal_autocheckpoint`), as a WAL hook of our own: after a commit
/// that leaves the log with `pages` frames or more (the hook's argument), a passive checkpoint — with
/// its writes to the database file gathered. A checkpoint copies pages in page order, and almost all
/// of them follow the one before (measured on the benchmark's store: 44,936 of 45,348 writes), so they
/// reach the file in writes of up to 64 KiB instead of one per page; the checkpoint syncs the file
/// before it records its progress in the log's index, and the sync writes out first (as above), so no
/// reader relies on a page that is not yet in the file. A checkpoint that fails is retried by a later
/// commit, as SQLite's own hook does.
static int perimeter_checkpoint_hook(void *pages, sqlite3 *db, const char *name, int frames) {
    if (frames < (int)(intptr_t)pages) return SQLITE_OK;
    // Through the file control (the VFS's own copy of these static functions answers it): start
    // gathering unless the file already does; `started` says whether this call started it.
    int started = PERIMETER_COALESCE_UNLESS_ON;
    if (sqlite3_file_control(db, name, PERIMETER_FCNTL_COALESCE, &started) != SQLITE_OK) started = 0;
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, 0, 0);
    if (started) {
        // Nothing is left after a checkpoint that synced; pages of one that failed before its sync are
        // written as they would have been (the log still holds them, and nothing relies on them yet).
        int off = 0;
        (void)sqlite3_file_control(db, name, PERIMETER_FCNTL_COALESCE, &off);
    }
    return SQLITE_OK;
}

/// Checkpoints automatically once the log holds `pages` frames, through perimeter_checkpoint_hook
/// (replaces `PRAGMA wal_autocheckpoint`, whose hook it overrides, and the other way round).
static inline void perimeter_wal_autocheckpoint(sqlite3 *db, int pages) {
    sqlite3_wal_hook(db, perimeter_checkpoint_hook, (void *)(intptr_t)pages);
}

/// SQLITE_FULL and SQLITE_IOERR_WRITE as values (the extended code is a macro expression).
static inline int perimeter_sqlite_full(void) { return SQLITE_FULL; }
static inline int perimeter_sqlite_ioerr_write(void) { return SQLITE_IOERR_WRITE; }

#endif
