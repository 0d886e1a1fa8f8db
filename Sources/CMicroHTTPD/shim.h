// The parts of libmicrohttpd's C API that Swift cannot call directly (variadic functions, sockaddr
// handling). Only PerimeterHTTP imports this module.
#ifndef PERIMETER_CMICROHTTPD_SHIM_H
#define PERIMETER_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// The port the daemon is bound to (useful after asking for port 0), or 0 when unknown.
static inline uint16_t perimeter_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

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
struct perimeter_mhd_connection_state {
    char *raw_path;
    size_t capacity;
};

/// MHD_OPTION_NOTIFY_CONNECTION: allocates the per-connection state when a connection opens and frees
/// it when it closes.
static inline void perimeter_mhd_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                                   enum MHD_ConnectionNotificationCode code) {
    (void)cls;
    (void)connection;
    if (socket_context == NULL) return;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = calloc(1, sizeof(struct perimeter_mhd_connection_state));
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct perimeter_mhd_connection_state *state = (struct perimeter_mhd_connection_state *)*socket_context;
        if (state != NULL) {
            free(state->raw_path);
            free(state);
        }
        *socket_context = NULL;
    }
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

/// Starts a daemon listening on `address` (IPv4 or IPv6 literal) and `port` (0: any free port) with an
/// internal thread pool of `threads` threads, suspend/resume enabled (for streamed responses), a
/// per-connection idle timeout in seconds, at most `connection_limit` concurrent connections (0: the
/// library's default, FD_SETSIZE - 4, shared by the pool's threads), and the raw request path of each
/// request recorded for perimeter_mhd_raw_path. Returns NULL when the address is not a literal or the
/// daemon cannot start (port in use, no permission).
static inline struct MHD_Daemon *perimeter_mhd_start(const char *address, uint16_t port, unsigned int threads,
                                                             unsigned int timeout_seconds, unsigned int connection_limit,
                                                             MHD_AccessHandlerCallback handler, void *handler_context,
                                                             MHD_RequestCompletedCallback completed,
                                                             void *completed_context) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *socket_address;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, address, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        socket_address = (const struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, address, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        socket_address = (const struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        return NULL;
    }
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, socket_address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit == 0 ? (unsigned int)(FD_SETSIZE - 4) : connection_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_NOTIFY_CONNECTION, perimeter_mhd_notify_connection, (void *)NULL,
                            MHD_OPTION_URI_LOG_CALLBACK, perimeter_mhd_record_target, (void *)NULL,
                            MHD_OPTION_END);
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
