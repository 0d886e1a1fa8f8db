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
/// connections (0: the library's default), and the raw request path of each request recorded for
/// perimeter_mhd_raw_path. Returns NULL when the daemon cannot start.
static inline struct MHD_Daemon *perimeter_mhd_start_loop(int listen_fd,
                                                          unsigned int timeout_seconds, unsigned int connection_limit,
                                                          size_t connection_memory,
                                                          MHD_AccessHandlerCallback handler, void *handler_context,
                                                          MHD_RequestCompletedCallback completed,
                                                          void *completed_context) {
    unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_LISTEN_SOCKET, listen_fd,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit == 0 ? (unsigned int)(FD_SETSIZE - 4) : connection_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_NOTIFY_CONNECTION, perimeter_mhd_notify_connection, (void *)NULL,
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
