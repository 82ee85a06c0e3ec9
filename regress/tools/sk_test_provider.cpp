// sk_test_provider: a SOFTWARE "security key" for the regress tests.
//
//   *** TEST ONLY. NO SECURITY WHATSOEVER. ***
//   The private key travels, unencrypted, inside the key handle, which
//   OpenSSH stores in the (possibly unencrypted) private key file. Anyone
//   who reads that file can sign. There is no device, no touch, no PIN: the
//   flags it reports are simply the ones it is asked for. Never install it,
//   never point a real ssh configuration at it.
//
// It implements the SecurityKeyProvider middleware API of OpenSSH 9.2
// (version 0x000a0000, as OpenSSH's PROTOCOL.u2f and sk-api.h describe it), so
// Debian 12's ssh-keygen (-w PATH, SSH_SK_PROVIDER) and ssh
// (-o SecurityKeyProvider=PATH, through ssh-sk-helper) can make and use
// sk-ssh-ed25519@openssh.com and sk-ecdsa-sha2-nistp256@openssh.com keys.
//
//   sk_api_version         0x000a0000
//   sk_enroll              a fresh key pair; public key 32 raw bytes
//                          (Ed25519) or SEC1 0x04||X||Y (P-256); key handle
//                          = "LHSKTP1" || alg byte || PKCS#8 DER private key;
//                          response flags = requested flags; fixed
//                          stand-ins for the attestation parts
//   sk_sign                signs H(app)||flags||counter||H(data) (69
//                          bytes): Ed25519 over the bytes, ECDSA over their
//                          SHA-256; flags echoed from the key's stored
//                          flags, counter fixed (kCounter)
//   sk_load_resident_keys  the resident credentials enrolled while
//                          LH_SK_TEST_RESIDENT_DIR named a directory
//                          (one file each; the PIN wanted when
//                          LH_SK_TEST_PIN is set); without it
//                          SSH_SK_ERR_UNSUPPORTED
//
// Environment (tests only): LH_SK_TEST_SIGN_FLAGS=N replaces the flags a
// signature reports (e.g. 0 for "no touch happened" on a touch key);
// LH_SK_TEST_PIN=PIN makes sk_enroll and sk_sign with the user
// verification flag (0x04) return SSH_SK_ERR_PIN_REQUIRED unless given
// that PIN, so OpenSSH asks for one (without it, the PIN is ignored and
// OpenSSH never asks). LH_SK_TEST_SIGN_DELAY_MS=N makes sk_sign take N ms
// (at most 5000), as a real authenticator waits for the touch: a notice
// shown meanwhile has time to appear before the signature ends it.
// LH_SK_TEST_ENROLL_ERROR=N (-1 to -5) makes sk_enroll fail with that
// code; LH_SK_TEST_CREDENTIAL_EXISTS=1 makes it refuse a resident
// credential (0x20) with SSH_SK_ERR_CREDENTIAL_EXISTS unless the request
// forces it (0x10), as an authenticator holding one for the same
// application and user does.
//
// Everything the caller gives is checked (algorithm, lengths, the handle's
// form and algorithm, NULL pointers, options marked required); any problem
// returns an SSH_SK_ERR_* code, never a crash. Built without sanitizers: it
// is loaded by Debian's (uninstrumented) ssh-keygen and ssh-sk-helper.
// Written from the API description; no OpenSSH code.

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

extern "C" {

// The ABI of OpenSSH 9.2's sk-api.h (0x000a0000): field order matters.
struct sk_enroll_response {
    uint8_t flags;
    uint8_t* public_key;
    size_t public_key_len;
    uint8_t* key_handle;
    size_t key_handle_len;
    uint8_t* signature;
    size_t signature_len;
    uint8_t* attestation_cert;
    size_t attestation_cert_len;
    uint8_t* authdata;
    size_t authdata_len;
};

struct sk_sign_response {
    uint8_t flags;
    uint32_t counter;
    uint8_t* sig_r;
    size_t sig_r_len;
    uint8_t* sig_s;
    size_t sig_s_len;
};

struct sk_resident_key {
    uint32_t alg;
    size_t slot;
    char* application;
    struct sk_enroll_response key;
    uint8_t flags;
    uint8_t* user_id;
    size_t user_id_len;
};

struct sk_option {
    char* name;
    char* value;
    uint8_t required;
};

uint32_t sk_api_version(void);
int sk_enroll(uint32_t alg, const uint8_t* challenge, size_t challenge_len, const char* application,
              uint8_t flags, const char* pin, struct sk_option** options,
              struct sk_enroll_response** enroll_response);
int sk_sign(uint32_t alg, const uint8_t* data, size_t data_len, const char* application,
            const uint8_t* key_handle, size_t key_handle_len, uint8_t flags, const char* pin,
            struct sk_option** options, struct sk_sign_response** sign_response);
int sk_load_resident_keys(const char* pin, struct sk_option** options, struct sk_resident_key*** rks,
                          size_t* nrks);

}  // extern "C"

namespace {

constexpr uint32_t kApiVersion = 0x000a0000;
constexpr uint32_t kAlgEcdsa = 0x00;
constexpr uint32_t kAlgEd25519 = 0x01;
constexpr int kErrGeneral = -1;
constexpr int kErrUnsupported = -2;
constexpr int kErrPinRequired = -3;
constexpr int kErrCredentialExists = -5;
constexpr uint8_t kFlagForceOperation = 0x10;
constexpr uint8_t kFlagResidentKey = 0x20;
constexpr uint8_t kFlagUserVerification = 0x04;
constexpr uint32_t kCounter = 0x00000007;

constexpr std::string_view kMagic = "LHSKTP1";      // then one byte: alg
constexpr size_t kMaxHandle = 4096;                  // PKCS#8 of either key is < 200 bytes
constexpr size_t kMaxData = 1u << 20;                // userauth data is < 1 KiB
constexpr size_t kMaxApplication = 1024;
constexpr size_t kMaxChallenge = 1024;

struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct PkeyCtxFree {
    void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct MdCtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct EcdsaSigFree {
    void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
using EcdsaSig = std::unique_ptr<ECDSA_SIG, EcdsaSigFree>;

// A malloc'd copy (OpenSSH frees the buffers with free()); never NULL on
// success, even for zero bytes.
uint8_t* copy_out(const uint8_t* p, size_t n) {
    auto* r = static_cast<uint8_t*>(std::malloc(n ? n : 1));
    if (r != nullptr && n != 0) std::memcpy(r, p, n);
    return r;
}

bool bounded_cstring(const char* s, size_t max) {
    return s != nullptr && ::strnlen(s, max + 1) <= max;
}

// Options: "device" and "user" are accepted (and ignored); any other option
// marked required is refused, as the API asks.
bool options_ok(sk_option** options) {
    if (options == nullptr) return true;
    for (size_t i = 0; options[i] != nullptr; i++) {
        if (i > 64) return false;
        const sk_option* o = options[i];
        if (o->name == nullptr) return false;
        std::string_view name(o->name, ::strnlen(o->name, 256));
        if (name == "device" || name == "user") continue;
        if (o->required != 0) return false;
    }
    return true;
}

// The 69 bytes an authenticator signs: H(app) || flags || counter || H(data).
bool signed_bytes(const char* application, uint8_t flags, uint32_t counter, const uint8_t* data,
                  size_t data_len, uint8_t out[69]) {
    if (SHA256(reinterpret_cast<const unsigned char*>(application), std::strlen(application), out) == nullptr)
        return false;
    out[32] = flags;
    out[33] = static_cast<uint8_t>(counter >> 24);
    out[34] = static_cast<uint8_t>(counter >> 16);
    out[35] = static_cast<uint8_t>(counter >> 8);
    out[36] = static_cast<uint8_t>(counter);
    static const uint8_t empty = 0;
    return SHA256(data_len ? data : &empty, data_len, out + 37) != nullptr;
}

Pkey generate(uint32_t alg) {
    if (alg == kAlgEd25519) {
        PkeyCtx c(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr));
        EVP_PKEY* k = nullptr;
        if (!c || EVP_PKEY_keygen_init(c.get()) != 1 || EVP_PKEY_keygen(c.get(), &k) != 1) return nullptr;
        return Pkey(k);
    }
    return Pkey(EVP_EC_gen("P-256"));
}

// The public key as OpenSSH wants it: 32 raw bytes, or 0x04||X||Y.
bool public_key_bytes(EVP_PKEY* k, uint32_t alg, std::vector<uint8_t>& out) {
    if (alg == kAlgEd25519) {
        out.resize(32);
        size_t len = out.size();
        return EVP_PKEY_get_raw_public_key(k, out.data(), &len) == 1 && len == 32;
    }
    out.resize(65);
    size_t len = 0;
    return EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, out.data(), out.size(),
                                           &len) == 1 &&
           len == 65 && out[0] == 0x04;
}

// Parses a handle this provider made; nullptr unless it holds a private key
// of the algorithm asked for.
Pkey key_from_handle(uint32_t alg, const uint8_t* handle, size_t len) {
    if (handle == nullptr || len <= kMagic.size() + 1 || len > kMaxHandle) return nullptr;
    if (std::memcmp(handle, kMagic.data(), kMagic.size()) != 0) return nullptr;
    if (handle[kMagic.size()] != alg) return nullptr;
    const unsigned char* p = handle + kMagic.size() + 1;
    const long der_len = static_cast<long>(len - kMagic.size() - 1);
    PKCS8_PRIV_KEY_INFO* info = d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, der_len);
    if (info == nullptr) return nullptr;
    const bool whole = p == handle + len;
    Pkey k(EVP_PKCS82PKEY(info));
    PKCS8_PRIV_KEY_INFO_free(info);
    if (!k || !whole) return nullptr;
    if (alg == kAlgEd25519) {
        if (EVP_PKEY_get_id(k.get()) != EVP_PKEY_ED25519) return nullptr;
    } else {
        char group[64] = {0};
        size_t glen = 0;
        if (!EVP_PKEY_is_a(k.get(), "EC") ||
            EVP_PKEY_get_utf8_string_param(k.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &glen) != 1 ||
            std::string_view(group, glen) != "prime256v1")
            return nullptr;
    }
    return k;
}

// LH_SK_TEST_PIN: a PIN is wanted for UV operations and this one is not it.
bool pin_missing(uint8_t flags, const char* pin) {
    const char* want = std::getenv("LH_SK_TEST_PIN");
    if (want == nullptr || (flags & kFlagUserVerification) == 0) return false;
    return pin == nullptr || !bounded_cstring(pin, 256) || std::strcmp(pin, want) != 0;
}

void free_enroll(sk_enroll_response* r) {
    if (r == nullptr) return;
    std::free(r->public_key);
    std::free(r->key_handle);
    std::free(r->signature);
    std::free(r->attestation_cert);
    std::free(r->authdata);
    std::free(r);
}

void free_sign(sk_sign_response* r) {
    if (r == nullptr) return;
    std::free(r->sig_r);
    std::free(r->sig_s);
    std::free(r);
}

// ---- resident credentials (LH_SK_TEST_RESIDENT_DIR): one file each,
// named by a hash of application and user id, holding
// alg(1) flags(1) len(2) application, user id(32), len(2) public key,
// len(2) key handle.
constexpr size_t kUserIdLen = 32;

const char* option_value(sk_option** options, std::string_view name) {
    if (options == nullptr) return nullptr;
    for (size_t i = 0; options[i] != nullptr && i <= 64; i++)
        if (options[i]->name != nullptr && name == options[i]->name) return options[i]->value;
    return nullptr;
}

// As libfido2's middleware: the user name, NUL-padded to 32 bytes.
std::vector<uint8_t> user_id_of(const char* user) {
    std::vector<uint8_t> id(kUserIdLen, 0);
    if (user != nullptr) std::memcpy(id.data(), user, ::strnlen(user, kUserIdLen - 1));
    return id;
}

std::string resident_path(const char* dir, const char* application, const std::vector<uint8_t>& user_id) {
    std::vector<uint8_t> in(application, application + std::strlen(application));
    in.push_back(0);
    in.insert(in.end(), user_id.begin(), user_id.end());
    uint8_t h[32];
    SHA256(in.data(), in.size(), h);
    std::string name;
    char hex[3];
    for (int i = 0; i < 8; i++) {
        std::snprintf(hex, sizeof hex, "%02x", h[i]);
        name += hex;
    }
    return std::string(dir) + "/" + name;
}

void put16(std::string& out, size_t n) {
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xff));
}

bool store_resident(const std::string& path, uint32_t alg, uint8_t flags, const char* application,
                    const std::vector<uint8_t>& user_id, const std::vector<uint8_t>& pub,
                    const std::vector<uint8_t>& handle) {
    std::string rec;
    rec.push_back(static_cast<char>(alg));
    rec.push_back(static_cast<char>(flags));
    put16(rec, std::strlen(application));
    rec += application;
    rec.append(user_id.begin(), user_id.end());
    put16(rec, pub.size());
    rec.append(pub.begin(), pub.end());
    put16(rec, handle.size());
    rec.append(handle.begin(), handle.end());
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(rec.data(), static_cast<std::streamsize>(rec.size()));
    return static_cast<bool>(f);
}

void free_resident(sk_resident_key* rk) {
    if (rk == nullptr) return;
    std::free(rk->application);
    std::free(rk->key.public_key);
    std::free(rk->key.key_handle);
    std::free(rk->key.signature);
    std::free(rk->key.attestation_cert);
    std::free(rk->key.authdata);
    std::free(rk->user_id);
    std::free(rk);
}

// One stored credential, or nullptr if the file is not one.
sk_resident_key* load_resident(const std::string& path, size_t slot) {
    std::ifstream f(path, std::ios::binary);
    const std::string rec((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t p = 0;
    auto take = [&](size_t n) -> const uint8_t* {
        if (rec.size() - p < n) return nullptr;
        const auto* r = reinterpret_cast<const uint8_t*>(rec.data() + p);
        p += n;
        return r;
    };
    auto len16 = [&](size_t& n) {
        const uint8_t* b = take(2);
        if (b == nullptr) return false;
        n = static_cast<size_t>(b[0]) << 8 | b[1];
        return true;
    };
    const uint8_t* head = take(2);
    size_t app_len = 0, pub_len = 0, handle_len = 0;
    if (head == nullptr || !len16(app_len)) return nullptr;
    const uint8_t* app = take(app_len);
    const uint8_t* uid = app ? take(kUserIdLen) : nullptr;
    if (uid == nullptr || !len16(pub_len)) return nullptr;
    const uint8_t* pub = take(pub_len);
    if (pub == nullptr || !len16(handle_len)) return nullptr;
    const uint8_t* handle = take(handle_len);
    if (handle == nullptr || p != rec.size()) return nullptr;
    auto* rk = static_cast<sk_resident_key*>(std::calloc(1, sizeof(sk_resident_key)));
    if (rk == nullptr) return nullptr;
    rk->alg = head[0];
    rk->slot = slot;
    rk->flags = head[1];
    rk->application = static_cast<char*>(std::calloc(1, app_len + 1));
    if (rk->application != nullptr) std::memcpy(rk->application, app, app_len);
    rk->key.flags = head[1];
    rk->key.public_key = copy_out(pub, pub_len);
    rk->key.public_key_len = pub_len;
    rk->key.key_handle = copy_out(handle, handle_len);
    rk->key.key_handle_len = handle_len;
    rk->user_id = copy_out(uid, kUserIdLen);
    rk->user_id_len = kUserIdLen;
    if (rk->application == nullptr || rk->key.public_key == nullptr || rk->key.key_handle == nullptr ||
        rk->user_id == nullptr) {
        free_resident(rk);
        return nullptr;
    }
    return rk;
}

// Unsigned big-endian bytes of a BIGNUM, malloc'd.
bool bn_out(const BIGNUM* bn, uint8_t** out, size_t* out_len) {
    const int n = BN_num_bytes(bn);
    if (n <= 0 || n > 66) return false;
    *out = static_cast<uint8_t*>(std::malloc(static_cast<size_t>(n)));
    if (*out == nullptr) return false;
    if (BN_bn2bin(bn, *out) != n) return false;
    *out_len = static_cast<size_t>(n);
    return true;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) uint32_t sk_api_version(void) {
    return kApiVersion;
}

__attribute__((visibility("default"))) int sk_enroll(uint32_t alg, const uint8_t* challenge,
                                                     size_t challenge_len, const char* application,
                                                     uint8_t flags, const char* pin,
                                                     sk_option** options,
                                                     sk_enroll_response** enroll_response) {
    if (enroll_response == nullptr) return kErrGeneral;
    *enroll_response = nullptr;
    if (alg != kAlgEd25519 && alg != kAlgEcdsa) return kErrUnsupported;
    if ((challenge == nullptr && challenge_len != 0) || challenge_len > kMaxChallenge) return kErrGeneral;
    if (!bounded_cstring(application, kMaxApplication)) return kErrGeneral;
    if (!options_ok(options)) return kErrUnsupported;
    if (pin_missing(flags, pin)) return kErrPinRequired;
    if (const char* e = std::getenv("LH_SK_TEST_ENROLL_ERROR")) {
        const int code = std::atoi(e);
        if (code < 0 && code >= -5) return code;
    }
    if (std::getenv("LH_SK_TEST_CREDENTIAL_EXISTS") != nullptr && (flags & kFlagResidentKey) != 0 &&
        (flags & kFlagForceOperation) == 0)
        return kErrCredentialExists;
    const char* resident_dir = std::getenv("LH_SK_TEST_RESIDENT_DIR");
    std::string resident_file;
    const std::vector<uint8_t> user_id = user_id_of(option_value(options, "user"));
    if (resident_dir != nullptr && (flags & kFlagResidentKey) != 0) {
        resident_file = resident_path(resident_dir, application, user_id);
        if (std::ifstream(resident_file).good() && (flags & kFlagForceOperation) == 0) return kErrCredentialExists;
    }

    Pkey k = generate(alg);
    if (!k) return kErrGeneral;
    std::vector<uint8_t> pub;
    if (!public_key_bytes(k.get(), alg, pub)) return kErrGeneral;
    PKCS8_PRIV_KEY_INFO* info = EVP_PKEY2PKCS8(k.get());
    if (info == nullptr) return kErrGeneral;
    unsigned char* der = nullptr;
    const int der_len = i2d_PKCS8_PRIV_KEY_INFO(info, &der);
    PKCS8_PRIV_KEY_INFO_free(info);
    if (der_len <= 0 || der == nullptr) return kErrGeneral;
    std::vector<uint8_t> handle(kMagic.begin(), kMagic.end());
    handle.push_back(static_cast<uint8_t>(alg));
    handle.insert(handle.end(), der, der + der_len);
    OPENSSL_clear_free(der, static_cast<size_t>(der_len));
    if (!resident_file.empty() &&
        !store_resident(resident_file, alg, flags & static_cast<uint8_t>(~kFlagForceOperation), application,
                        user_id, pub, handle))
        return kErrGeneral;

    auto* r = static_cast<sk_enroll_response*>(std::calloc(1, sizeof(sk_enroll_response)));
    if (r == nullptr) return kErrGeneral;
    r->flags = flags;  // OpenSSH stores these as the key's flags.
    r->public_key = copy_out(pub.data(), pub.size());
    r->public_key_len = pub.size();
    r->key_handle = copy_out(handle.data(), handle.size());
    r->key_handle_len = handle.size();
    // Attestation: fixed stand-ins of different lengths (OpenSSH copies
    // them into the attestation file without looking), so a test can see
    // each in its place.
    static constexpr std::string_view kSignature = "LHSKTP attestation signature";
    static constexpr std::string_view kCertificate = "LHSKTP certificate";
    static constexpr std::string_view kAuthdata = "LHSKTP authenticator data";
    r->signature = copy_out(reinterpret_cast<const uint8_t*>(kSignature.data()), kSignature.size());
    r->signature_len = kSignature.size();
    r->attestation_cert = copy_out(reinterpret_cast<const uint8_t*>(kCertificate.data()), kCertificate.size());
    r->attestation_cert_len = kCertificate.size();
    r->authdata = copy_out(reinterpret_cast<const uint8_t*>(kAuthdata.data()), kAuthdata.size());
    r->authdata_len = kAuthdata.size();
    if (r->public_key == nullptr || r->key_handle == nullptr || r->signature == nullptr ||
        r->attestation_cert == nullptr || r->authdata == nullptr) {
        free_enroll(r);
        return kErrGeneral;
    }
    *enroll_response = r;
    return 0;
}

__attribute__((visibility("default"))) int sk_sign(uint32_t alg, const uint8_t* data, size_t data_len,
                                                   const char* application, const uint8_t* key_handle,
                                                   size_t key_handle_len, uint8_t flags, const char* pin,
                                                   sk_option** options, sk_sign_response** sign_response) {
    if (sign_response == nullptr) return kErrGeneral;
    *sign_response = nullptr;
    if (alg != kAlgEd25519 && alg != kAlgEcdsa) return kErrUnsupported;
    if ((data == nullptr && data_len != 0) || data_len > kMaxData) return kErrGeneral;
    if (!bounded_cstring(application, kMaxApplication)) return kErrGeneral;
    if (!options_ok(options)) return kErrUnsupported;
    Pkey k = key_from_handle(alg, key_handle, key_handle_len);
    if (!k) return kErrGeneral;
    if (pin_missing(flags, pin)) return kErrPinRequired;
    if (const char* d = std::getenv("LH_SK_TEST_SIGN_DELAY_MS"); d != nullptr && *d != '\0') {
        char* end = nullptr;
        const unsigned long ms = std::strtoul(d, &end, 10);
        if (*end != '\0' || ms > 5000) return kErrGeneral;
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }

    uint8_t sflags = flags;
    if (const char* f = std::getenv("LH_SK_TEST_SIGN_FLAGS"); f != nullptr && *f != '\0') {
        char* end = nullptr;
        const unsigned long v = std::strtoul(f, &end, 0);
        if (*end != '\0' || v > 0xff) return kErrGeneral;
        sflags = static_cast<uint8_t>(v);
    }
    uint8_t buf[69];
    if (!signed_bytes(application, sflags, kCounter, data, data_len, buf)) return kErrGeneral;

    auto* r = static_cast<sk_sign_response*>(std::calloc(1, sizeof(sk_sign_response)));
    if (r == nullptr) return kErrGeneral;
    r->flags = sflags;
    r->counter = kCounter;
    bool ok = false;
    if (alg == kAlgEd25519) {
        MdCtx m(EVP_MD_CTX_new());
        uint8_t sig[64];
        size_t sig_len = sizeof sig;
        ok = m && EVP_DigestSignInit(m.get(), nullptr, nullptr, nullptr, k.get()) == 1 &&
             EVP_DigestSign(m.get(), sig, &sig_len, buf, sizeof buf) == 1 && sig_len == 64;
        if (ok) {
            r->sig_r = copy_out(sig, sig_len);
            r->sig_r_len = sig_len;
            ok = r->sig_r != nullptr;
        }
    } else {
        uint8_t digest[32];
        PkeyCtx c(EVP_PKEY_CTX_new(k.get(), nullptr));
        uint8_t der[128];
        size_t der_len = sizeof der;
        ok = SHA256(buf, sizeof buf, digest) != nullptr && c && EVP_PKEY_sign_init(c.get()) == 1 &&
             EVP_PKEY_sign(c.get(), der, &der_len, digest, sizeof digest) == 1;
        if (ok) {
            const unsigned char* p = der;
            EcdsaSig s(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len)));
            const BIGNUM* br = nullptr;
            const BIGNUM* bs = nullptr;
            if (s) ECDSA_SIG_get0(s.get(), &br, &bs);
            ok = s && br != nullptr && bs != nullptr && bn_out(br, &r->sig_r, &r->sig_r_len) &&
                 bn_out(bs, &r->sig_s, &r->sig_s_len);
        }
    }
    OPENSSL_cleanse(buf, sizeof buf);
    if (!ok) {
        free_sign(r);
        return kErrGeneral;
    }
    *sign_response = r;
    return 0;
}

__attribute__((visibility("default"))) int sk_load_resident_keys(const char* pin, sk_option** options,
                                                                 sk_resident_key*** rks, size_t* nrks) {
    if (rks == nullptr || nrks == nullptr) return kErrGeneral;
    *rks = nullptr;
    *nrks = 0;
    const char* dir = std::getenv("LH_SK_TEST_RESIDENT_DIR");
    if (dir == nullptr) return kErrUnsupported;
    if (!options_ok(options)) return kErrUnsupported;
    // Listing credentials wants the PIN when the authenticator has one.
    if (pin_missing(kFlagUserVerification, pin)) return kErrPinRequired;
    DIR* d = ::opendir(dir);
    if (d == nullptr) return kErrGeneral;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end());
    std::vector<sk_resident_key*> found;
    for (const auto& n : names)
        if (sk_resident_key* rk = load_resident(std::string(dir) + "/" + n, found.size())) found.push_back(rk);
    auto** out = static_cast<sk_resident_key**>(std::calloc(found.size() + 1, sizeof(sk_resident_key*)));
    if (out == nullptr) {
        for (auto* rk : found) free_resident(rk);
        return kErrGeneral;
    }
    std::copy(found.begin(), found.end(), out);
    *rks = out;
    *nrks = found.size();
    return 0;
}

}  // extern "C"
