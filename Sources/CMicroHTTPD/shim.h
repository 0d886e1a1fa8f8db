// The parts of libmicrohttpd's C API that Swift cannot call directly (variadic functions, sockaddr
// handling). Only PerimeterHTTP imports this module.
#ifndef PERIMETER_CMICROHTTPD_SHIM_H
#define PERIMETER_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/// Writes the client's address as text into `buffer` (empty when unknown).
static inline void perimeter_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (size == 0) return;
    buffer[0] = 0;
    if (info == NULL || info->client_addr == NULL) return;
    if (info->client_addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)info->client_addr)->sin_addr, buffer, (socklen_t)size);
    } else if (info->client_addr->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)info->client_addr)->sin6_addr, buffer, (socklen_t)size);
    }
}

/// MHD_CONTENT_READER_END_OF_STREAM as a plain value (Swift cannot import the cast macro).
static inline ssize_t perimeter_mhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }

/// MHD_CONTENT_READER_END_WITH_ERROR as a plain value: ends a stream by closing its connection.
static inline ssize_t perimeter_mhd_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }

/// MHD_SIZE_UNKNOWN as a plain value.
static inline uint64_t perimeter_mhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }

/// A response holding a copy of `size` bytes at `data`.
static inline struct MHD_Response *perimeter_mhd_response_copying(const void *data, size_t size) {
    return MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
}

#include <stdlib.h>
#include <sys/resource.h>

/// What the transport keeps per connection (libmicrohttpd's "socket context"): the raw path of the
/// request being read, as the client sent it (still percent-encoded), so that routing can split it on
/// '/' before decoding and ids containing '/' (sent as %2F) stay addressable.
#include <pthread.h>
#include <time.h>

/// A client address as a key: family byte, then 4 (IPv4) or 16 (IPv6) address bytes.
struct perimeter_address_key {
    uint8_t bytes[17];
};

/// One client address with open connections (a bucket chain of perimeter_mhd_guard).
struct perimeter_address_count {
    struct perimeter_address_key key;
    unsigned int count;
    struct perimeter_address_count *next;
};

#define PERIMETER_ADDRESS_BUCKETS 1024

/// What the daemons of one server share: the per-client-address connection counts (under `lock`,
/// since each loop's daemon accepts on its own thread), the limits, and counters for /metrics.
struct perimeter_mhd_guard {
    pthread_mutex_t lock;
    /// Most connections open at once from one client address (0: no limit).
    unsigned int per_address_limit;
    /// Milliseconds a connection has to deliver a whole request (head and body) from the moment it
    /// opened or its previous response was sent (0: no deadline).
    uint64_t request_deadline_ms;
    struct perimeter_address_count *buckets[PERIMETER_ADDRESS_BUCKETS];
    /// Connections refused because their address had `per_address_limit` open (under `lock`).
    uint64_t refused;
    /// Connections closed because their request missed the deadline (under `lock`).
    uint64_t timed_out;
};

struct perimeter_mhd_connection_state;

/// One loop's daemon: its open connections (touched only on the loop's thread) and the shared guard.
struct perimeter_mhd_loop_state {
    struct perimeter_mhd_guard *guard;
    struct perimeter_mhd_connection_state *head;
    uint64_t last_scan_ms;
};

struct perimeter_mhd_connection_state {
    char *raw_path;
    size_t capacity;
    struct MHD_Connection *connection;
    struct perimeter_mhd_loop_state *loop;
    struct perimeter_mhd_connection_state *previous;
    struct perimeter_mhd_connection_state *next;
    struct perimeter_address_key key;
    int counted;
    /// Monotonic milliseconds by which the request being read must be complete (0: none running).
    uint64_t deadline_ms;
};

static inline uint64_t perimeter_monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/// The key of `address`; returns 0 for a family other than IPv4 and IPv6.
static inline int perimeter_address_key_of(const struct sockaddr *address, struct perimeter_address_key *key) {
    memset(key, 0, sizeof *key);
    if (address == NULL) return 0;
    if (address->sa_family == AF_INET) {
        key->bytes[0] = 4;
        memcpy(key->bytes + 1, &((const struct sockaddr_in *)address)->sin_addr, 4);
        return 1;
    }
    if (address->sa_family == AF_INET6) {
        key->bytes[0] = 6;
        memcpy(key->bytes + 1, &((const struct sockaddr_in6 *)address)->sin6_addr, 16);
        return 1;
    }
    return 0;
}

static inline size_t perimeter_address_bucket(const struct perimeter_address_key *key) {
    uint64_t hash = 1469598103934665603ull;  // FNV-1a
    for (size_t i = 0; i < sizeof key->bytes; i++) hash = (hash ^ key->bytes[i]) * 1099511628211ull;
    return (size_t)(hash % PERIMETER_ADDRESS_BUCKETS);
}

/// The count of `key` (call with the lock held); created at 0 when `create`, else NULL when absent.
static inline struct perimeter_address_count *perimeter_address_find(struct perimeter_mhd_guard *guard,
                                                                     const struct perimeter_address_key *key, int create) {
    size_t bucket = perimeter_address_bucket(key);
    for (struct perimeter_address_count *entry = guard->buckets[bucket]; entry != NULL; entry = entry->next) {
        if (memcmp(entry->key.bytes, key->bytes, sizeof key->bytes) == 0) return entry;
    }
    if (!create) return NULL;
    struct perimeter_address_count *entry = (struct perimeter_address_count *)calloc(1, sizeof *entry);
    if (entry == NULL) return NULL;
    entry->key = *key;
    entry->next = guard->buckets[bucket];
    guard->buckets[bucket] = entry;
    return entry;
}

/// A new guard (free it with perimeter_mhd_guard_free after every daemon using it stopped), or NULL.
static inline struct perimeter_mhd_guard *perimeter_mhd_guard_new(unsigned int per_address_limit, uint64_t request_deadline_ms) {
    struct perimeter_mhd_guard *guard = (struct perimeter_mhd_guard *)calloc(1, sizeof *guard);
    if (guard == NULL) return NULL;
    pthread_mutex_init(&guard->lock, NULL);
    guard->per_address_limit = per_address_limit;
    guard->request_deadline_ms = request_deadline_ms;
    return guard;
}

static inline void perimeter_mhd_guard_free(struct perimeter_mhd_guard *guard) {
    if (guard == NULL) return;
    for (size_t i = 0; i < PERIMETER_ADDRESS_BUCKETS; i++) {
        struct perimeter_address_count *entry = guard->buckets[i];
        while (entry != NULL) {
            struct perimeter_address_count *next = entry->next;
            free(entry);
            entry = next;
        }
    }
    pthread_mutex_destroy(&guard->lock);
    free(guard);
}

/// Reads the guard's counters: connections refused for their address, requests past the deadline.
static inline void perimeter_mhd_guard_counters(struct perimeter_mhd_guard *guard, uint64_t *refused, uint64_t *timed_out) {
    pthread_mutex_lock(&guard->lock);
    *refused = guard->refused;
    *timed_out = guard->timed_out;
    pthread_mutex_unlock(&guard->lock);
}

/// The accept policy (libmicrohttpd's `apc`): refuses — closes at once, before any buffer is given —
/// a connection whose address already has the per-address limit open, so that one client cannot
/// take every connection slot from the others.
static inline enum MHD_Result perimeter_mhd_accept_policy(void *cls, const struct sockaddr *address, socklen_t length) {
    (void)length;
    struct perimeter_mhd_guard *guard = (struct perimeter_mhd_guard *)cls;
    if (guard == NULL || guard->per_address_limit == 0) return MHD_YES;
    struct perimeter_address_key key;
    if (!perimeter_address_key_of(address, &key)) return MHD_YES;
    pthread_mutex_lock(&guard->lock);
    struct perimeter_address_count *entry = perimeter_address_find(guard, &key, 0);
    int refuse = entry != NULL && entry->count >= guard->per_address_limit;
    if (refuse) guard->refused += 1;
    pthread_mutex_unlock(&guard->lock);
    return refuse ? MHD_NO : MHD_YES;
}

/// A new loop state for one daemon sharing `guard`, or NULL.
static inline struct perimeter_mhd_loop_state *perimeter_mhd_loop_state_new(struct perimeter_mhd_guard *guard) {
    struct perimeter_mhd_loop_state *loop = (struct perimeter_mhd_loop_state *)calloc(1, sizeof *loop);
    if (loop != NULL) loop->guard = guard;
    return loop;
}

static inline void perimeter_mhd_loop_state_free(struct perimeter_mhd_loop_state *loop) { free(loop); }

/// Starts the request deadline of `state` now (a new connection, or one whose response was sent).
static inline void perimeter_mhd_arm(struct perimeter_mhd_connection_state *state) {
    uint64_t deadline = state->loop->guard->request_deadline_ms;
    state->deadline_ms = deadline == 0 ? 0 : perimeter_monotonic_ms() + deadline;
}

/// MHD_OPTION_NOTIFY_CONNECTION: allocates the per-connection state when a connection opens (counting
/// its address, starting its request deadline) and frees it when it closes.
static inline void perimeter_mhd_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                                   enum MHD_ConnectionNotificationCode code) {
    struct perimeter_mhd_loop_state *loop = (struct perimeter_mhd_loop_state *)cls;
    if (socket_context == NULL || loop == NULL) return;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct perimeter_mhd_connection_state *state =
            (struct perimeter_mhd_connection_state *)calloc(1, sizeof(struct perimeter_mhd_connection_state));
        *socket_context = state;
        if (state == NULL) return;
        state->connection = connection;
        state->loop = loop;
        state->next = loop->head;
        if (loop->head != NULL) loop->head->previous = state;
        loop->head = state;
        perimeter_mhd_arm(state);
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (info != NULL && perimeter_address_key_of(info->client_addr, &state->key)) {
            pthread_mutex_lock(&loop->guard->lock);
            struct perimeter_address_count *entry = perimeter_address_find(loop->guard, &state->key, 1);
            if (entry != NULL) {
                entry->count += 1;
                state->counted = 1;
            }
            pthread_mutex_unlock(&loop->guard->lock);
        }
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct perimeter_mhd_connection_state *state = (struct perimeter_mhd_connection_state *)*socket_context;
        if (state != NULL) {
            if (state->previous != NULL) state->previous->next = state->next; else loop->head = state->next;
            if (state->next != NULL) state->next->previous = state->previous;
            if (state->counted) {
                struct perimeter_mhd_guard *guard = loop->guard;
                pthread_mutex_lock(&guard->lock);
                size_t bucket = perimeter_address_bucket(&state->key);
                struct perimeter_address_count **link = &guard->buckets[bucket];
                while (*link != NULL && memcmp((*link)->key.bytes, state->key.bytes, sizeof state->key.bytes) != 0) {
                    link = &(*link)->next;
                }
                if (*link != NULL && --(*link)->count == 0) {
                    struct perimeter_address_count *gone = *link;
                    *link = gone->next;
                    free(gone);
                }
                pthread_mutex_unlock(&guard->lock);
            }
            free(state->raw_path);
            free(state);
        }
        *socket_context = NULL;
    }
}

static inline struct perimeter_mhd_connection_state *perimeter_mhd_state(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return (info == NULL) ? NULL : (struct perimeter_mhd_connection_state *)info->socket_context;
}

/// The request on `connection` arrived whole (head and body): its deadline no longer runs while the
/// handler works and the response is sent. Call from the access handler.
static inline void perimeter_mhd_request_arrived(struct MHD_Connection *connection) {
    struct perimeter_mhd_connection_state *state = perimeter_mhd_state(connection);
    if (state != NULL) state->deadline_ms = 0;
}

/// The response on `connection` was sent: the next request's deadline starts now. Call from the
/// completion callback.
static inline void perimeter_mhd_request_completed(struct MHD_Connection *connection) {
    struct perimeter_mhd_connection_state *state = perimeter_mhd_state(connection);
    if (state != NULL && state->loop != NULL) perimeter_mhd_arm(state);
}

/// Shuts down the socket of `connection` (both ways), so that libmicrohttpd notices at once and closes
/// it on its next run, releasing its buffers. Call on the connection's loop thread only.
static inline void perimeter_mhd_shut_down(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info != NULL && info->connect_fd >= 0) (void)shutdown(info->connect_fd, SHUT_RDWR);
}

/// Closes the connections of `loop` whose request is past its deadline (a slow client sending a byte
/// now and then resets libmicrohttpd's idle timeout, never this). Looks at most every 200 ms. Call on
/// the loop's thread between runs of its daemon. Returns how many were closed.
static inline unsigned int perimeter_mhd_enforce_deadlines(struct perimeter_mhd_loop_state *loop) {
    if (loop == NULL || loop->guard->request_deadline_ms == 0) return 0;
    uint64_t now = perimeter_monotonic_ms();
    if (now - loop->last_scan_ms < 200) return 0;
    loop->last_scan_ms = now;
    unsigned int closed = 0;
    for (struct perimeter_mhd_connection_state *state = loop->head; state != NULL; state = state->next) {
        if (state->deadline_ms == 0 || now < state->deadline_ms) continue;
        state->deadline_ms = 0;
        pthread_mutex_lock(&loop->guard->lock);
        loop->guard->timed_out += 1;
        pthread_mutex_unlock(&loop->guard->lock);
        perimeter_mhd_shut_down(state->connection);
        closed += 1;
    }
    return closed;
}

/// MHD_OPTION_URI_LOG_CALLBACK: called once per request with the request target before libmicrohttpd
/// decodes it; keeps its path (up to '?', without a scheme and authority) in the connection's state.
/// Returns NULL, so the request context seen by the access handler starts NULL as without it.
static inline void *perimeter_mhd_record_target(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info == NULL || info->socket_context == NULL || uri == NULL) return NULL;
    struct perimeter_mhd_connection_state *state = (struct perimeter_mhd_connection_state *)info->socket_context;
    const char *start = uri;
    const char *scheme = uri[0] == '/' ? NULL : strstr(uri, "://");
    if (scheme != NULL) {  // absolute form: http://host:port/path
        const char *slash = strchr(scheme + 3, '/');
        start = slash != NULL ? slash : "/";
    }
    size_t length = strcspn(start, "?#");
    if (state->capacity < length + 1) {
        char *grown = (char *)realloc(state->raw_path, length + 1);
        if (grown == NULL) {
            if (state->raw_path != NULL) state->raw_path[0] = 0;
            return NULL;
        }
        state->raw_path = grown;
        state->capacity = length + 1;
    }
    memcpy(state->raw_path, start, length);
    state->raw_path[length] = 0;
    return NULL;
}

/// The raw (percent-encoded) path of the request being handled on `connection`, or NULL when unknown.
/// Valid until the connection's next request is read; call it from the access handler.
static inline const char *perimeter_mhd_raw_path(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info == NULL || info->socket_context == NULL) return NULL;
    const struct perimeter_mhd_connection_state *state = (const struct perimeter_mhd_connection_state *)info->socket_context;
    return (state->raw_path != NULL && state->raw_path[0] != 0) ? state->raw_path : NULL;
}

/// What perimeter_mhd_framing_problem found in a request head.
struct perimeter_framing_scan {
    int content_lengths;
    int transfer_encodings;
    int malformed;
    char first[32];
    int conflicting;
};

static inline enum MHD_Result perimeter_framing_visit(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct perimeter_framing_scan *scan = (struct perimeter_framing_scan *)cls;
    if (key == NULL) return MHD_YES;
    if (strcasecmp(key, "Content-Length") == 0) {
        const char *text = value == NULL ? "" : value;
        size_t length = strlen(text);
        int digits = length > 0 && length < sizeof scan->first && strspn(text, "0123456789") == length;
        if (!digits) scan->malformed = 1;
        if (scan->content_lengths == 0) {
            if (length < sizeof scan->first) memcpy(scan->first, text, length + 1);
        } else if (strcmp(scan->first, text) != 0) {
            scan->conflicting = 1;
        }
        scan->content_lengths += 1;
    } else if (strcasecmp(key, "Transfer-Encoding") == 0) {
        scan->transfer_encodings += 1;
    }
    return MHD_YES;
}

/// Checks the framing of the request head on `connection` (call from the access handler's first call,
/// once the head is read): 0 when sound; 1 when it carries Content-Length values that differ; 2 when a
/// Content-Length is not a plain decimal number; 3 when it carries both Content-Length and
/// Transfer-Encoding. A proxy in front of the server might read such a request differently
/// (request smuggling), so it must be refused, not guessed at.
static inline int perimeter_mhd_framing_problem(struct MHD_Connection *connection) {
    struct perimeter_framing_scan scan;
    memset(&scan, 0, sizeof scan);
    MHD_get_connection_values(connection, MHD_HEADER_KIND, perimeter_framing_visit, &scan);
    if (scan.conflicting) return 1;
    if (scan.malformed && scan.content_lengths > 0) return 2;
    if (scan.content_lengths > 0 && scan.transfer_encodings > 0) return 3;
    return 0;
}

/// The request's declared body length (its one Content-Length, a plain decimal number), or -1 when it
/// declares none. Call after perimeter_mhd_framing_problem found the framing sound.
static inline long long perimeter_mhd_declared_length(struct MHD_Connection *connection) {
    const char *value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
    if (value == NULL || value[0] == 0) return -1;
    unsigned long long length = 0;
    for (const char *c = value; *c != 0; c++) {
        if (*c < '0' || *c > '9') return -1;
        if (length > (unsigned long long)(LLONG_MAX / 10)) return LLONG_MAX;
        length = length * 10 + (unsigned long long)(*c - '0');
    }
    return length > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)length;
}

/// Fills `v4` or `v6` with `address` (an IPv4 or IPv6 literal) and `port`; returns the one filled, or
/// NULL when `address` is not a literal. Sets `*is_v6`.
static inline const struct sockaddr *perimeter_socket_address(const char *address, uint16_t port, struct sockaddr_in *v4,
                                                               struct sockaddr_in6 *v6, int *is_v6) {
    memset(v4, 0, sizeof *v4);
    memset(v6, 0, sizeof *v6);
    *is_v6 = 0;
    if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return (const struct sockaddr *)v4;
    }
    if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        *is_v6 = 1;
        return (const struct sockaddr *)v6;
    }
    return NULL;
}

/// A listening TCP socket on `address` (an IPv4 or IPv6 literal) and `port` (0: any free port):
/// non-blocking, close-on-exec, SO_REUSEADDR as libmicrohttpd sets it (IPv6: IPv6 only), with the
/// system's largest backlog. Returns the descriptor, or -1 when the address is not a literal or the
/// port cannot be bound (in use, no permission). Shared by the daemons of perimeter_mhd_start_loop.
static inline int perimeter_listen_socket(const char *address, uint16_t port) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    int is_v6;
    const struct sockaddr *socket_address = perimeter_socket_address(address, port, &v4, &v6, &is_v6);
    if (socket_address == NULL) return -1;
    int fd = socket(is_v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int on = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (is_v6) (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (bind(fd, socket_address, is_v6 ? sizeof v6 : sizeof v4) != 0 || listen(fd, SOMAXCONN) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/// The port a socket is bound to, or 0 when unknown.
static inline uint16_t perimeter_socket_port(int fd) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return 0;
    if (address.ss_family == AF_INET) return ntohs(((const struct sockaddr_in *)&address)->sin_port);
    if (address.ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)&address)->sin6_port);
    return 0;
}

/// Starts a daemon that the caller runs from its own thread (an event loop: see perimeter_mhd_loop_open):
/// epoll, no internal thread, suspend/resume enabled, accepting on `listen_fd`, which several such
/// daemons — one per loop thread — share (each loop accepts when it is ready; the others find nothing).
/// Quiesce each daemon before stopping it: the listening socket is then left to the caller to close
/// once. Also a per-connection idle timeout in seconds, `connection_memory` bytes of buffer per
/// connection (libmicrohttpd clears it for every request), at most `connection_limit` concurrent
/// connections (0: the library's default), the raw request path of each request recorded for
/// perimeter_mhd_raw_path, and `loop` (which must outlive the daemon) keeping its connections for the
/// per-address limit and the request deadline of its guard. Returns NULL when the daemon cannot start.
static inline struct MHD_Daemon *perimeter_mhd_start_loop(int listen_fd,
                                                          unsigned int timeout_seconds, unsigned int connection_limit,
                                                          size_t connection_memory,
                                                          MHD_AccessHandlerCallback handler, void *handler_context,
                                                          MHD_RequestCompletedCallback completed,
                                                          void *completed_context,
                                                          struct perimeter_mhd_loop_state *loop) {
    unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    return MHD_start_daemon(flags, 0, perimeter_mhd_accept_policy, (void *)loop->guard, handler, handler_context,
                            MHD_OPTION_LISTEN_SOCKET, listen_fd,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit == 0 ? (unsigned int)(FD_SETSIZE - 4) : connection_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_NOTIFY_CONNECTION, perimeter_mhd_notify_connection, (void *)loop,
                            MHD_OPTION_URI_LOG_CALLBACK, perimeter_mhd_record_target, (void *)NULL,
                            MHD_OPTION_END);
}

/// An event loop's wait set for a daemon started with perimeter_mhd_start_loop: a new epoll instance
/// watching the daemon's own epoll set (readable while any of its sockets is ready) and `wake_fd` (an
/// eventfd another thread writes to end a wait). Returns the epoll descriptor, or -1.
static inline int perimeter_mhd_loop_open(struct MHD_Daemon *daemon, int wake_fd) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == NULL) return -1;
    int loop = epoll_create1(EPOLL_CLOEXEC);
    if (loop < 0) return -1;
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = EPOLLIN;
    event.data.fd = info->epoll_fd;
    if (epoll_ctl(loop, EPOLL_CTL_ADD, info->epoll_fd, &event) != 0) {
        close(loop);
        return -1;
    }
    event.data.fd = wake_fd;
    if (epoll_ctl(loop, EPOLL_CTL_ADD, wake_fd, &event) != 0) {
        close(loop);
        return -1;
    }
    return loop;
}

/// Waits until the daemon has work (a socket ready, a timeout due) or `wake_fd` is written (then
/// drained), at most `longest_ms` milliseconds. A daemon without an internal thread has no wake-up
/// channel of its own: a connection resumed from another thread must be followed by a write to
/// `wake_fd`, and one resumed on the loop's thread by another MHD_run.
static inline void perimeter_mhd_loop_wait(int loop, struct MHD_Daemon *daemon, int wake_fd, int longest_ms) {
    MHD_UNSIGNED_LONG_LONG due = 0;
    int wait = longest_ms;
    if (MHD_get_timeout(daemon, &due) == MHD_YES && due < (MHD_UNSIGNED_LONG_LONG)wait) wait = (int)due;
    struct epoll_event events[2];
    int ready = epoll_wait(loop, events, 2, wait);
    for (int i = 0; i < ready; i++) {
        if (events[i].data.fd == wake_fd) {
            uint64_t count;
            ssize_t drained = read(wake_fd, &count, sizeof count);
            (void)drained;
        }
    }
}

/// The daemon serving `connection`.
static inline struct MHD_Daemon *perimeter_mhd_connection_daemon(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_DAEMON);
    return info == NULL ? NULL : info->daemon;
}

/// A non-blocking eventfd for waking a loop, or -1.
static inline int perimeter_wake_open(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// Wakes the loop waiting on `wake_fd` (its next wait returns at once and drains it).
static inline void perimeter_wake(int wake_fd) {
    uint64_t one = 1;
    ssize_t written = write(wake_fd, &one, sizeof one);
    (void)written;
}

/// Raises this process's soft limit on open file descriptors to at least `wanted` (never above the
/// hard limit, never lowering it). Returns the soft limit in force afterwards.
static inline uint64_t perimeter_raise_descriptor_limit(uint64_t wanted) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
        rlim_t target = (limit.rlim_max == RLIM_INFINITY || limit.rlim_max > wanted) ? (rlim_t)wanted : limit.rlim_max;
        struct rlimit raised = limit;
        raised.rlim_cur = target;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)limit.rlim_cur;
}

#endif
