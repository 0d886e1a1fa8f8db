// The parts of SQLite's C API that Swift cannot call directly.
#ifndef PERIMETER_CSQLITE_SHIM_H
#define PERIMETER_CSQLITE_SHIM_H

#include <sqlite3.h>
#include <string.h>

/// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot express: binds with it
/// make SQLite copy the value before the call returns.
static inline int perimeter_sqlite3_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
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

/// SQLITE_FULL and SQLITE_IOERR_WRITE as values (the extended code is a macro expression).
static inline int perimeter_sqlite_full(void) { return SQLITE_FULL; }
static inline int perimeter_sqlite_ioerr_write(void) { return SQLITE_IOERR_WRITE; }

#endif
