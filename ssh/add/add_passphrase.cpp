#include "ssh/add/add_passphrase.hpp"

#include "ssh/keygen/keygen_files.hpp"
#include "ssh/prompt/prompt.hpp"

#include <cstdlib>
#include <strings.h>
#include <unistd.h>

namespace longhaul::add {

namespace {

bool set(const char* v) { return v != nullptr && *v != '\0'; }

} // namespace

passphrase_route choose_passphrase_route(const char* display, const char* wayland_display, const char* askpass_require,
                                         const char* askpass, bool stdin_is_tty)
{
    bool allow_askpass = set(display) || set(wayland_display);
    bool use_askpass = false;
    if (askpass_require != nullptr) {
        if (strcasecmp(askpass_require, "force") == 0) {
            use_askpass = true;
            allow_askpass = true;
        } else if (strcasecmp(askpass_require, "prefer") == 0) {
            use_askpass = allow_askpass;
        } else if (strcasecmp(askpass_require, "never") == 0) {
            allow_askpass = false;
        }
    }
    // RP_ALLOW_STDIN: input that is not a terminal means askpass, if allowed.
    if (!use_askpass && !stdin_is_tty)
        use_askpass = true;
    if (!(use_askpass && allow_askpass))
        return {};
    return {true, set(askpass) ? std::string(askpass) : std::string("/usr/bin/ssh-askpass")};
}

secret_bytes read_passphrase_allow_stdin(const std::string& prompt)
{
    const auto route = choose_passphrase_route(std::getenv("DISPLAY"), std::getenv("WAYLAND_DISPLAY"),
                                               std::getenv("SSH_ASKPASS_REQUIRE"), std::getenv("SSH_ASKPASS"),
                                               ::isatty(STDIN_FILENO) == 1);
    if (route.askpass)
        return run_askpass(prompt, route.program.c_str()).value_or(secret_bytes{});
    // readpassphrase(3): the terminal, else standard input.
    std::string line = keygen::read_passphrase(prompt.c_str());
    secret_bytes out(as_bytes(std::string_view(line)));
    cleanse(line.data(), line.size());
    return out;
}

} // namespace longhaul::add
