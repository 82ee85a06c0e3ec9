// OpenSSH's notify_start/notify_complete: a notice the user cannot answer
// ("touch your key now"), for ssh, ssh-agent and ssh-keygen.
#pragma once

#include <string>

namespace longhaul {

class logger;

// The notice goes to stderr when it is a terminal (and force_askpass is
// off), else to the askpass program (SSH_ASKPASS_PROMPT=none) where a
// display (DISPLAY, or SSH_ASKPASS_REQUIRE=force) could show it; the
// askpass is ended when the operation is over. Nowhere else: a notice
// nobody can see is dropped, as OpenSSH drops it.
class user_notifier {
public:
    user_notifier(bool force_askpass, const std::string& message, logger& log);
    ~user_notifier() { complete(nullptr); }
    user_notifier(const user_notifier&) = delete;
    user_notifier& operator=(const user_notifier&) = delete;
    // `conclusion` (e.g. "User presence confirmed") goes to stderr when the
    // notice did.
    void complete(const char* conclusion);

private:
    bool on_stderr_ = false;
    bool done_ = false;
    int pid_ = -1;
};

} // namespace longhaul
