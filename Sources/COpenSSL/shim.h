/* The low-level SHA256_Init/Update/Final are deprecated in OpenSSL 3 in
 * favour of EVP, but they are kept, they reach the same SHA-NI code, and
 * they skip EVP's per-call provider dispatch, which costs more than hashing
 * one ~100-byte log record (docs/BENCHMARKS.md). Suppressed here, for this
 * module only, so Swift imports them without deprecation warnings. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
/* The login secret's bindings and store MAC (HMAC-SHA-256, one shot). */
#include <openssl/hmac.h>
/* The rights' keys (LocalAuthKeys): P-256 through the EC_KEY interface,
 * deprecated in OpenSSL 3 but kept, and the one whose keys we can fill from
 * a scalar and free with BN_clear_free (EC_KEY_free clears the private
 * scalar), with no OSSL_PARAM copies of it to chase. */
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdh.h>
#include <openssl/ecdsa.h>
#include <openssl/obj_mac.h>
