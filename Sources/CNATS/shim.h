// The parts of the NATS C client (libnats, Debian's libnats-dev) that Swift cannot call directly:
// nats_CheckCompatibility is a macro, and the message-list and header helpers are easier to use as small
// typed functions. Only PerimeterNATS imports this module.
#ifndef PERIMETER_CNATS_SHIM_H
#define PERIMETER_CNATS_SHIM_H

#include <stdbool.h>
#include <stdint.h>
#include <nats/nats.h>

/// nats_CheckCompatibility() as a function: whether the library linked at run time is compatible with
/// the headers this module was compiled against.
static inline bool perimeter_nats_check_compatibility(void) {
    return nats_CheckCompatibility();
}

/// The message at `index` of a fetched list (Swift sees `Msgs` as an optional pointer to optionals).
static inline natsMsg *perimeter_nats_msg_list_at(natsMsgList *list, int index) {
    return list->Msgs[index];
}

/// The header value of `key`, or NULL when the message has no such header (or no headers at all).
static inline const char *perimeter_nats_msg_header(natsMsg *msg, const char *key) {
    const char *value = NULL;
    if (natsMsgHeader_Get(msg, key, &value) != NATS_OK) return NULL;
    return value;
}

#endif
