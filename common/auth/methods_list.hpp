// sshd's AuthenticationMethods: each list is a comma-separated sequence of
// methods ("publickey,password"), a method optionally narrowed to a
// submethod ("keyboard-interactive:pam"); authentication succeeds when every
// method of one list has succeeded, in order. These functions also serve
// sshd_config validation.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

enum class method_match {
    none,    // the list does not start with this method
    method,  // it does, without a submethod
    both,    // it does, and the submethods agree
    partial, // it does with a submethod, and none was given to compare
};

// How `list` starts relative to method[:submethod]. An empty submethod means
// "not given" (OpenSSH's NULL).
method_match list_starts_with(std::string_view list, std::string_view method, std::string_view submethod);

// Removes method[:submethod] from the front of `list` when it is there
// (as method or with matching submethod); true when it was.
bool remove_leading_method(std::string& list, std::string_view method, std::string_view submethod);

// The methods sshd knows by name, in the order its FAILURE lists them.
// hostbased and gssapi-with-mic are known but never enabled here.
const std::vector<std::string_view>& known_auth_methods();

// Checks one list: non-empty, every method known (errors name it as sshd
// does: "Unknown authentication method \"x\" in list"), and with
// `is_enabled`, every method enabled ("Disabled method \"x\" in
// AuthenticationMethods list \"l\""). Returns the error text, empty when valid.
std::string check_methods_list(std::string_view list, const std::function<bool(std::string_view)>& is_enabled = {});

// The state of AuthenticationMethods during one authentication.
class auth_methods_lists {
public:
    auth_methods_lists() = default;
    // `configured` empty or {"any"}: no constraint. Lists that name a disabled
    // method are dropped; `skipped` receives each one.
    void setup(const std::vector<std::string>& configured, const std::function<bool(std::string_view)>& is_enabled,
               std::vector<std::string>* skipped = nullptr);
    // True when AuthenticationMethods constrains this authentication.
    bool active() const noexcept { return active_; }
    // True when lists were configured but none survived setup().
    bool exhausted() const noexcept { return active_ && lists_.empty(); }
    // Whether some remaining list starts with the method.
    bool allowed(std::string_view method, std::string_view submethod = {}) const;
    // After the method succeeded: removes it from the front of each list;
    // true when a list is now complete (authentication succeeded).
    bool update(std::string_view method, std::string_view submethod);
    const std::vector<std::string>& lists() const noexcept { return lists_; }

private:
    bool active_ = false;
    std::vector<std::string> lists_;
};

} // namespace longhaul
