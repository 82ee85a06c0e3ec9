#include "ssh/pkcs11/pkcs11_provider.hpp"

#include "common/log.hpp"
#include "common/text.hpp"
#include "common/wire.hpp"
#include "ssh/pkcs11/pkcs11_keys.hpp"

#include <p11-kit/pkcs11.h>

#include <algorithm>
#include <utility>
#include <cstdio>

namespace longhaul {

struct pkcs11_provider::function_table {
    CK_FUNCTION_LIST* list = nullptr;
};

struct pkcs11_provider::slot_state {
    CK_SLOT_ID id = 0;
    CK_TOKEN_INFO token{};
    std::string label;
    CK_SESSION_HANDLE session = CK_INVALID_HANDLE;
    bool logged_in = false;
};

namespace {

std::string printable_field(const unsigned char* field, std::size_t width)
{
    return printable(pkcs11::padded_text(field, width));
}

// One attribute's value, read in the two calls PKCS#11 wants (the length,
// then the bytes) and bounded; nullopt when the module fails either call
// or the value is too long.
std::optional<bytes> attribute(CK_FUNCTION_LIST* f, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE obj,
                               CK_ATTRIBUTE_TYPE type, std::size_t max, logger& log)
{
    CK_ATTRIBUTE a{type, nullptr, 0};
    CK_RV rv = f->C_GetAttributeValue(session, obj, &a, 1);
    if (rv != CKR_OK) {
        log.error("C_GetAttributeValue failed: " + std::to_string(rv));
        return std::nullopt;
    }
    if (a.ulValueLen == CK_UNAVAILABLE_INFORMATION || a.ulValueLen > max) {
        log.error("invalid attribute length");
        return std::nullopt;
    }
    bytes value(a.ulValueLen);
    a.pValue = value.data();
    rv = f->C_GetAttributeValue(session, obj, &a, 1);
    if (rv != CKR_OK) {
        log.error("C_GetAttributeValue failed: " + std::to_string(rv));
        return std::nullopt;
    }
    if (a.ulValueLen > value.size())
        return std::nullopt;
    value.resize(a.ulValueLen);
    return value;
}

// The first object matching `filter`, as OpenSSH's pkcs11_find.
std::optional<CK_OBJECT_HANDLE> find_object(CK_FUNCTION_LIST* f, CK_SESSION_HANDLE session, CK_ATTRIBUTE* filter,
                                            CK_ULONG n, logger& log)
{
    CK_RV rv = f->C_FindObjectsInit(session, filter, n);
    if (rv != CKR_OK) {
        log.error("C_FindObjectsInit failed (nattr " + std::to_string(n) + "): " + std::to_string(rv));
        return std::nullopt;
    }
    CK_OBJECT_HANDLE obj = CK_INVALID_HANDLE;
    CK_ULONG found = 0;
    rv = f->C_FindObjects(session, &obj, 1, &found);
    if (rv != CKR_OK || found != 1)
        log.debug("pkcs11_find: C_FindObjects failed (nfound " + std::to_string(found) + " nattr " +
                  std::to_string(n) + "): " + std::to_string(rv));
    if (f->C_FindObjectsFinal(session) != CKR_OK)
        log.error("C_FindObjectsFinal failed");
    if (rv != CKR_OK || found != 1)
        return std::nullopt;
    return obj;
}

// A public key object's SSH key: RSA from modulus and exponent, ECDSA from
// the curve and point; nullopt (logged) for anything else.
std::optional<public_key> public_key_of(CK_FUNCTION_LIST* f, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE obj,
                                        CK_KEY_TYPE type, logger& log)
{
    // Both attributes of the key, neither empty.
    const auto two = [&](CK_ATTRIBUTE_TYPE a, CK_ATTRIBUTE_TYPE b) -> std::optional<std::pair<bytes, bytes>> {
        auto first = attribute(f, session, obj, a, pkcs11::max_attribute, log);
        auto second = first ? attribute(f, session, obj, b, pkcs11::max_attribute, log) : std::nullopt;
        if (!second)
            return std::nullopt;
        if (first->empty() || second->empty()) {
            log.error("invalid attribute length");
            return std::nullopt;
        }
        return std::pair{std::move(*first), std::move(*second)};
    };
    result<public_key> key = errc::invalid_format;
    if (type == CKK_RSA) {
        auto ne = two(CKA_MODULUS, CKA_PUBLIC_EXPONENT);
        if (!ne)
            return std::nullopt;
        key = pkcs11::rsa_public_key(ne->first, ne->second);
    } else if (type == CKK_EC) {
        auto curve = two(CKA_EC_PARAMS, CKA_EC_POINT);
        if (!curve)
            return std::nullopt;
        key = pkcs11::ecdsa_public_key(curve->first, curve->second);
    } else {
        log.error("skipping unsupported key type");
        return std::nullopt;
    }
    if (!key) {
        log.error("invalid key: " + std::string(to_string(key.error())));
        return std::nullopt;
    }
    return std::move(*key);
}

// Every object of class `cls` the session sees (at most 4096). They are
// listed first and read after C_FindObjectsFinal: a module may refuse
// other calls while a search is active.
std::vector<CK_OBJECT_HANDLE> find_all(CK_FUNCTION_LIST* f, CK_SESSION_HANDLE session, CK_OBJECT_CLASS cls,
                                       logger& log)
{
    std::vector<CK_OBJECT_HANDLE> objects;
    CK_ATTRIBUTE filter{CKA_CLASS, &cls, sizeof cls};
    CK_RV rv = f->C_FindObjectsInit(session, &filter, 1);
    if (rv != CKR_OK) {
        log.error("C_FindObjectsInit failed: " + std::to_string(rv));
        return objects;
    }
    constexpr std::size_t max_objects = 4096;
    for (;;) {
        CK_OBJECT_HANDLE obj = CK_INVALID_HANDLE;
        CK_ULONG n = 0;
        if ((rv = f->C_FindObjects(session, &obj, 1, &n)) != CKR_OK) {
            log.error("C_FindObjects failed: " + std::to_string(rv));
            break;
        }
        if (n == 0 || objects.size() >= max_objects)
            break;
        objects.push_back(obj);
    }
    if ((rv = f->C_FindObjectsFinal(session)) != CKR_OK)
        log.error("C_FindObjectsFinal failed: " + std::to_string(rv));
    return objects;
}

} // namespace

std::string pkcs11_pin_prompt(std::string_view token_label)
{
    return "Enter PIN for '" + std::string(token_label) + "': ";
}

pkcs11_provider::pkcs11_provider(std::string path, options opt, logger& log)
    : path_(std::move(path)), options_(std::move(opt)), log_(log)
{
}

pkcs11_provider::~pkcs11_provider()
{
    if (!functions_)
        return;
    CK_FUNCTION_LIST* f = functions_->list;
    for (auto& s : slots_)
        if (s->session != CK_INVALID_HANDLE && f->C_CloseSession(s->session) != CKR_OK)
            log_.error("C_CloseSession failed");
    if (initialized_ && f->C_Finalize(nullptr) != CKR_OK)
        log_.error("C_Finalize for provider " + path_ + " failed");
}

std::unique_ptr<pkcs11_provider> pkcs11_provider::load(const std::string& path, options opt, logger& log,
                                                       const secret_bytes* pin)
{
    const bool have_pin = pin != nullptr && !pin->empty();
    if (auto why = check_library_file(path, "C_GetFunctionList"); !why.empty()) {
        log.error(why);
        log.error("provider " + path + " is not a PKCS11 library");
        return nullptr;
    }
    std::unique_ptr<pkcs11_provider> p(new pkcs11_provider(path, std::move(opt), log));
    p->library_ = shared_library::open(path);
    if (p->library_.empty()) {
        log.error("dlopen " + path + " failed: " + p->library_.error());
        return nullptr;
    }
    auto get_list = reinterpret_cast<CK_C_GetFunctionList>(p->library_.symbol("C_GetFunctionList"));
    if (get_list == nullptr) {
        log.error("dlsym(C_GetFunctionList) failed: " + p->library_.error());
        return nullptr;
    }
    CK_FUNCTION_LIST* f = nullptr;
    CK_RV rv = get_list(&f);
    if (rv != CKR_OK || f == nullptr) {
        log.error("C_GetFunctionList for provider " + path + " failed: " + std::to_string(rv));
        return nullptr;
    }
    p->functions_ = std::make_unique<function_table>(function_table{f});
    if ((rv = f->C_Initialize(nullptr)) != CKR_OK) {
        log.error("C_Initialize for provider " + path + " failed: " + std::to_string(rv));
        return nullptr;
    }
    p->initialized_ = true;
    CK_INFO info{};
    if ((rv = f->C_GetInfo(&info)) != CKR_OK) {
        log.error("C_GetInfo for provider " + path + " failed: " + std::to_string(rv));
        return nullptr;
    }
    log.debug("provider " + path + ": manufacturerID <" +
              printable_field(info.manufacturerID, sizeof info.manufacturerID) + "> cryptokiVersion " +
              std::to_string(info.cryptokiVersion.major) + "." + std::to_string(info.cryptokiVersion.minor) +
              " libraryDescription <" + printable_field(info.libraryDescription, sizeof info.libraryDescription) +
              "> libraryVersion " + std::to_string(info.libraryVersion.major) + "." +
              std::to_string(info.libraryVersion.minor));
    CK_ULONG nslots = 0;
    if ((rv = f->C_GetSlotList(CK_TRUE, nullptr, &nslots)) != CKR_OK) {
        log.error("C_GetSlotList failed: " + std::to_string(rv));
        return nullptr;
    }
    if (nslots == 0) {
        log.debug("pkcs11_register_provider: provider " + path + " returned no slots");
        return nullptr;
    }
    // A module with thousands of slots is broken; OpenSSH takes what it says.
    constexpr CK_ULONG max_slots = 1024;
    if (nslots > max_slots) {
        log.error("C_GetSlotList for provider " + path + " returned " + std::to_string(nslots) + " slots");
        return nullptr;
    }
    std::vector<CK_SLOT_ID> ids(nslots);
    if ((rv = f->C_GetSlotList(CK_TRUE, ids.data(), &nslots)) != CKR_OK) {
        log.error("C_GetSlotList for provider " + path + " failed: " + std::to_string(rv));
        return nullptr;
    }
    ids.resize(std::min<std::size_t>(nslots, ids.size()));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        auto s = std::make_unique<slot_state>();
        s->id = ids[i];
        p->slots_.push_back(std::move(s));
        slot_state& slot = *p->slots_.back();
        if ((rv = f->C_GetTokenInfo(slot.id, &slot.token)) != CKR_OK) {
            log.error("C_GetTokenInfo for provider " + path + " slot " + std::to_string(i) +
                      " failed: " + std::to_string(rv));
            continue;
        }
        if ((slot.token.flags & CKF_TOKEN_INITIALIZED) == 0) {
            log.debug2("pkcs11_register_provider: ignoring uninitialised token in provider " + path + " slot " +
                       std::to_string(i));
            continue;
        }
        slot.label = pkcs11::padded_text(slot.token.label, sizeof slot.token.label);
        char flags[32];
        std::snprintf(flags, sizeof flags, "0x%lx", static_cast<unsigned long>(slot.token.flags));
        log.debug("provider " + path + " slot " + std::to_string(i) + ": label <" + printable(slot.label) +
                  "> manufacturerID <" + printable_field(slot.token.manufacturerID, sizeof slot.token.manufacturerID) +
                  "> model <" + printable_field(slot.token.model, sizeof slot.token.model) + "> serial <" +
                  printable_field(slot.token.serialNumber, sizeof slot.token.serialNumber) + "> flags " + flags);
        const bool login_required = (slot.token.flags & CKF_LOGIN_REQUIRED) != 0;
        if (login_required && !p->options_.interactive && !have_pin) {
            log.error("pin required");
            continue;
        }
        if ((rv = f->C_OpenSession(slot.id, CKF_RW_SESSION | CKF_SERIAL_SESSION, nullptr, nullptr,
                                   &slot.session)) != CKR_OK) {
            log.error("C_OpenSession failed: " + std::to_string(rv));
            slot.session = CK_INVALID_HANDLE;
            continue;
        }
        if (login_required && have_pin) {
            rv = f->C_Login(slot.session, CKU_USER, const_cast<std::uint8_t*>(pin->data()), pin->size());
            if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
                log.error("C_Login failed: " + std::to_string(rv));
                if (f->C_CloseSession(slot.session) != CKR_OK)
                    log.error("C_CloseSession failed");
                slot.session = CK_INVALID_HANDLE;
                continue;
            }
            slot.logged_in = true;
        }
        p->fetch_keys(i);
        // Some tokens show their keys only after a login.
        if (p->keys_.empty() && !slot.logged_in && p->options_.interactive) {
            if (!p->login(slot, CKU_USER)) {
                log.error("login failed");
                continue;
            }
            p->fetch_keys(i);
        }
    }
    return p;
}

void pkcs11_provider::fetch_keys(std::size_t slot)
{
    CK_FUNCTION_LIST* f = functions_->list;
    const CK_SESSION_HANDLE session = slots_[slot]->session;
    const auto add = [&](public_key key, std::string label, bytes id, const char* from) {
        const bool included = std::any_of(keys_.begin(), keys_.end(), [&](const pkcs11_key& k) { return k.key == key; });
        if (included) {
            log_.debug2(std::string(from) + ": key already included");
            return;
        }
        keys_.push_back({std::move(key), std::move(label), slot, std::move(id)});
        log_.debug("have " + std::to_string(keys_.size()) + " keys");
    };
    // Public-key objects first, then X.509 certificates (OpenSSH's
    // pkcs11_fetch_keys, then pkcs11_fetch_certs).
    for (const CK_OBJECT_HANDLE obj : find_all(f, session, CKO_PUBLIC_KEY, log_)) {
        CK_KEY_TYPE type = 0;
        CK_ATTRIBUTE a{CKA_KEY_TYPE, &type, sizeof type};
        if (const CK_RV rv = f->C_GetAttributeValue(session, obj, &a, 1); rv != CKR_OK) {
            log_.error("C_GetAttributeValue failed: " + std::to_string(rv));
            continue;
        }
        auto label = attribute(f, session, obj, CKA_LABEL, pkcs11::max_label, log_);
        auto id = label ? attribute(f, session, obj, CKA_ID, pkcs11::max_attribute, log_) : std::nullopt;
        auto key = id ? public_key_of(f, session, obj, type, log_) : std::nullopt;
        if (!key) {
            log_.error("failed to fetch key");
            continue;
        }
        add(std::move(*key), std::string(label->begin(), label->end()), std::move(*id), "pkcs11_fetch_keys");
    }
    for (const CK_OBJECT_HANDLE obj : find_all(f, session, CKO_CERTIFICATE, log_)) {
        CK_CERTIFICATE_TYPE type = 0;
        CK_ATTRIBUTE a{CKA_CERTIFICATE_TYPE, &type, sizeof type};
        if (const CK_RV rv = f->C_GetAttributeValue(session, obj, &a, 1); rv != CKR_OK) {
            log_.error("C_GetAttributeValue failed: " + std::to_string(rv));
            continue;
        }
        if (type != CKC_X_509) {
            log_.error("skipping unsupported certificate type " + std::to_string(type));
            continue;
        }
        auto id = attribute(f, session, obj, CKA_ID, pkcs11::max_attribute, log_);
        auto subject = id ? attribute(f, session, obj, CKA_SUBJECT, pkcs11::max_attribute, log_) : std::nullopt;
        auto value = subject ? attribute(f, session, obj, CKA_VALUE, pkcs11::max_attribute, log_) : std::nullopt;
        std::string why = "invalid attribute length";
        std::optional<pkcs11::certificate_key> key;
        if (value && !subject->empty() && !value->empty())
            key = pkcs11::x509_public_key(*subject, *value, why);
        if (!key) {
            if (value)
                log_.error(why);
            log_.error("failed to fetch key");
            continue;
        }
        add(std::move(key->key), std::move(key->subject), std::move(*id), "pkcs11_fetch_certs");
    }
}

bool pkcs11_provider::login(slot_state& s, unsigned long user_type)
{
    if (!options_.interactive) {
        log_.error(std::string("need pin entry") +
                   ((s.token.flags & CKF_PROTECTED_AUTHENTICATION_PATH) != 0 ? " on reader keypad" : ""));
        return false;
    }
    std::optional<secret_bytes> pin;
    if ((s.token.flags & CKF_PROTECTED_AUTHENTICATION_PATH) != 0) {
        log_.verbose("Deferring PIN entry to reader keypad.");
    } else {
        if (options_.read_pin)
            pin = options_.read_pin(pkcs11_pin_prompt(printable(s.label)));
        if (!pin) {
            log_.debug("pkcs11_login_slot: no pin specified");
            return false;
        }
    }
    CK_FUNCTION_LIST* f = functions_->list;
    const CK_RV rv = f->C_Login(s.session, user_type, pin ? pin->data() : nullptr, pin ? pin->size() : 0);
    switch (rv) {
    case CKR_OK:
    case CKR_USER_ALREADY_LOGGED_IN: s.logged_in = true; return true;
    case CKR_PIN_LEN_RANGE: log_.error("PKCS#11 login failed: PIN length out of range"); break;
    case CKR_PIN_INCORRECT: log_.error("PKCS#11 login failed: PIN incorrect"); break;
    case CKR_PIN_LOCKED: log_.error("PKCS#11 login failed: PIN locked"); break;
    default: log_.error("PKCS#11 login failed: error " + std::to_string(rv)); break;
    }
    return false;
}

bool pkcs11_provider::get_private_key(const pkcs11_key& key, unsigned long mechanism, unsigned long& object)
{
    slot_state& s = *slots_[key.slot];
    CK_FUNCTION_LIST* f = functions_->list;
    if ((s.token.flags & CKF_LOGIN_REQUIRED) != 0 && !s.logged_in && !login(s, CKU_USER)) {
        log_.error("login failed");
        return false;
    }
    CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
    CK_BBOOL yes = CK_TRUE;
    bytes id = key.id;
    CK_ATTRIBUTE filter[] = {
        {CKA_CLASS, &cls, sizeof cls},
        {CKA_ID, id.empty() ? nullptr : id.data(), id.size()},
        {CKA_SIGN, &yes, sizeof yes},
    };
    // A key marked for signing first, then any with the id.
    auto obj = find_object(f, s.session, filter, 3, log_);
    if (!obj)
        obj = find_object(f, s.session, filter, 2, log_);
    if (!obj) {
        log_.error("cannot find private key");
        return false;
    }
    CK_MECHANISM mech{mechanism, nullptr, 0};
    if (const CK_RV rv = f->C_SignInit(s.session, &mech, *obj); rv != CKR_OK) {
        log_.error("C_SignInit failed: " + std::to_string(rv));
        return false;
    }
    // A key that wants its PIN for every signature (a PIV signing key).
    CK_BBOOL always = CK_FALSE;
    CK_ATTRIBUTE a{CKA_ALWAYS_AUTHENTICATE, &always, sizeof always};
    const CK_RV rv = f->C_GetAttributeValue(s.session, *obj, &a, 1);
    log_.debug("pkcs11_check_obj_bool_attrib: provider \"" + path_ + "\" slot " + std::to_string(key.slot) +
               " object " + std::to_string(*obj) + ": attrib " + std::to_string(CKA_ALWAYS_AUTHENTICATE) + " = " +
               std::to_string(rv == CKR_OK && always == CK_TRUE ? 1 : 0));
    if (rv == CKR_OK && always == CK_TRUE && !login(s, CKU_CONTEXT_SPECIFIC)) {
        log_.error("login failed for always-auth key");
        return false;
    }
    object = *obj;
    return true;
}

std::optional<bytes> pkcs11_provider::sign(const pkcs11_key& key, std::string_view alg, byte_span data)
{
    auto input = pkcs11::sign_input(key.key, alg, data);
    if (!input || key.slot >= slots_.size())
        return std::nullopt;
    const bool rsa = key.key.type() == key_type::rsa;
    unsigned long obj = 0;
    if (!get_private_key(key, rsa ? CKM_RSA_PKCS : CKM_ECDSA, obj)) {
        log_.error("pkcs11_get_key failed");
        return std::nullopt;
    }
    CK_FUNCTION_LIST* f = functions_->list;
    // An RSA signature is the modulus' length (16384 bits at most), ECDSA's
    // r||s 132 bytes at most; the module writes no more than we offer.
    bytes sig(max_mpint_bytes + 16);
    CK_ULONG len = sig.size();
    const CK_RV rv = f->C_Sign(slots_[key.slot]->session, input->data(), input->size(), sig.data(), &len);
    if (rv != CKR_OK) {
        log_.error("C_Sign failed: " + std::to_string(rv));
        return std::nullopt;
    }
    if (len > sig.size()) {
        log_.error("pkcs11_sign: bad signature length: " + std::to_string(len));
        return std::nullopt;
    }
    sig.resize(len);
    auto blob = pkcs11::signature_blob(key.key, alg, sig);
    if (!blob)
        log_.error("pkcs11_sign: bad signature length: " + std::to_string(len));
    return blob;
}

} // namespace longhaul
