// The parts of libcurl's C API that Swift cannot call directly: curl_easy_setopt and curl_easy_getinfo
// are variadic, so each argument type gets a typed wrapper; a few macros become functions. Only
// PerimeterHTTPClient imports this module.
#ifndef PERIMETER_CCURL_SHIM_H
#define PERIMETER_CCURL_SHIM_H

#include <stddef.h>
#include <curl/curl.h>

/// curl_easy_setopt for an option that takes a long.
static inline CURLcode perimeter_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for an option that takes a C string (libcurl copies strings, except POSTFIELDS).
static inline CURLcode perimeter_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for an option that takes a pointer the caller keeps alive (ERRORBUFFER, POSTFIELDS).
static inline CURLcode perimeter_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for an option that takes a string list (HTTPHEADER, RESOLVE).
static inline CURLcode perimeter_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for an option that takes a blob (CAINFO_BLOB); libcurl copies the bytes.
static inline CURLcode perimeter_curl_set_blob_copy(CURL *handle, CURLoption option, const void *data, size_t size) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = size;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(handle, option, &blob);
}

/// curl_easy_setopt for POSTFIELDSIZE_LARGE (a curl_off_t).
static inline CURLcode perimeter_curl_set_post_size(CURL *handle, size_t size) {
    return curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)size);
}

/// The write callback that discards the response body: webhook receivers' bodies are ignored, but
/// reading them to the end keeps the connection reusable.
static inline size_t perimeter_curl_discard(char *data, size_t size, size_t count, void *context) {
    (void)data;
    (void)context;
    return size * count;
}

/// Installs ``perimeter_curl_discard`` as the body writer.
static inline CURLcode perimeter_curl_discard_body(CURL *handle) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, perimeter_curl_discard);
}

/// curl_easy_getinfo for a long (RESPONSE_CODE, SSL_VERIFYRESULT, NUM_CONNECTS).
static inline CURLcode perimeter_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_easy_getinfo for a string owned by libcurl (CAINFO); NULL when unset.
static inline CURLcode perimeter_curl_get_string(CURL *handle, CURLINFO info, const char **value) {
    return curl_easy_getinfo(handle, info, value);
}

/// CURL_ERROR_SIZE: how large the error buffer must be.
static inline size_t perimeter_curl_error_size(void) { return CURL_ERROR_SIZE; }

/// CURL_GLOBAL_DEFAULT as a value.
static inline long perimeter_curl_global_default(void) { return CURL_GLOBAL_DEFAULT; }

#endif
