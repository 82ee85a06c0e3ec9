// PKCS#11 modules (PKCS11Provider, ssh -I, ssh-keygen -D): the library
// loaded in-process as OpenSSH 9.2's ssh and ssh-keygen load it
// (ssh-pkcs11.c): C_Initialize, every slot with an initialised token, a
// session on each, the RSA and ECDSA public-key objects as SSH keys named
// by their labels, a login with the token's PIN when a signature needs
// one, and signatures through CKM_RSA_PKCS and CKM_ECDSA. Messages and
// debug lines are OpenSSH's.
//
// The module is code the user named and trusts with their keys; what it
// answers is still bounded before use (attribute lengths, signature
// lengths), and the file is checked to be a PKCS#11 library before it is
// opened (check_library_file), so no other file has its constructors run.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/public_key.hpp"
#include "common/shared_library.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

class logger;

// One key a token holds.
struct pkcs11_key {
    public_key key;
    std::string label; // CKA_LABEL: the comment ssh-keygen -D prints, the name ssh shows
    std::size_t slot = 0;
    bytes id; // CKA_ID, which names the private key object too
};

// Reads a PIN for `prompt` ("Enter PIN for 'LABEL': "); nullopt when the
// user gave none (end of input, no terminal and no askpass).
using pkcs11_pin_reader = std::function<std::optional<secret_bytes>(const std::string& prompt)>;

class pkcs11_provider {
public:
    struct options {
        // A PIN may be asked for (OpenSSH's pkcs11_init(interactive): ssh
        // unless BatchMode, ssh-keygen always). Without it, a token that
        // wants a login is skipped with "pin required".
        bool interactive = true;
        pkcs11_pin_reader read_pin;
    };

    // pkcs11_add_provider: loads the module and lists the keys of every
    // initialised token (logging in first to a token that shows none, when
    // interactive). A `pin` given up front (ssh-add -s; empty: none) logs
    // in to each token that wants a login as its session opens. nullptr
    // after the failure is logged (the module is not a PKCS#11 library,
    // cannot be opened or initialised, or has no slots).
    static std::unique_ptr<pkcs11_provider> load(const std::string& path, options opt, logger& log,
                                                 const secret_bytes* pin = nullptr);
    ~pkcs11_provider();
    pkcs11_provider(const pkcs11_provider&) = delete;
    pkcs11_provider& operator=(const pkcs11_provider&) = delete;

    const std::string& path() const noexcept { return path_; }
    const std::vector<pkcs11_key>& keys() const noexcept { return keys_; }

    // A signature by `key` (one of keys()) with SSH algorithm `alg` over
    // `data`: the SSH signature blob, or nullopt after OpenSSH's lines say
    // why ("login failed", "pkcs11_get_key failed", "C_Sign failed: N").
    // Logs in first when the token wants it and no login was made yet.
    std::optional<bytes> sign(const pkcs11_key& key, std::string_view alg, byte_span data);

    struct function_table; // holds the module's CK_FUNCTION_LIST (pkcs11.h stays out of this header)
    struct slot_state;

private:
    pkcs11_provider(std::string path, options opt, logger& log);
    bool login(slot_state& s, unsigned long user_type);
    void fetch_keys(std::size_t slot);
    bool get_private_key(const pkcs11_key& key, unsigned long mechanism, unsigned long& object);

    std::string path_;
    options options_;
    logger& log_;
    shared_library library_;
    std::unique_ptr<function_table> functions_;
    bool initialized_ = false;
    std::vector<std::unique_ptr<slot_state>> slots_;
    std::vector<pkcs11_key> keys_;
};

// "Enter PIN for 'LABEL': ", OpenSSH's prompt for a token's PIN.
std::string pkcs11_pin_prompt(std::string_view token_label);

} // namespace longhaul
