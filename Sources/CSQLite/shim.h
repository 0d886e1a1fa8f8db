// The parts of SQLite's C API that Swift cannot call directly.
#ifndef PERIMETER_CSQLITE_SHIM_H
#define PERIMETER_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot express: binds with it
/// make SQLite copy the value before the call returns.
static inline int perimeter_sqlite3_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/// sqlite3_db_config is variadic; this is its SQLITE_DBCONFIG_DEFENSIVE form.
static inline int perimeter_sqlite3_db_config_defensive(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0);
}

#endif
