// The parts of OpenSSL's libcrypto that Perimeter uses: SHA-256 through the EVP digest interface,
// one-shot HMAC and CRYPTO_memcmp. Only PerimeterCrypto imports this module.
#ifndef PERIMETER_CCRYPTO_SHIM_H
#define PERIMETER_CCRYPTO_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#endif
