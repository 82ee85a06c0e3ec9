// PAM (UsePAM yes): authentication through libpam without blocking the
// server's event loop. pam_authenticate() and pam_acct_mgmt() run on a
// worker thread; whenever PAM's conversation needs answers from the client
// (keyboard-interactive), the worker stops and posts an event, and the
// caller later hands the answers back. An eventfd tells the caller's loop
// when an event is waiting.
//
//   pam_authenticator pam;
//   pam.start({.user = "alice", .remote_host = "192.0.2.1", .mode = pam_mode::keyboard_interactive}, err);
//   ...when pam.event_fd() is readable:
//   while (auto ev = pam.poll()) {
//       if (ev->kind == pam_event::type::prompts)  -> send INFO_REQUEST, later pam.respond(answers)
//       else                                       -> ev->success: done
//   }
//
// After success the same object opens the PAM session for the session code
// (setcred, open_session, environment, close_session), on the caller's thread.
#pragma once

#include "common/result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {

enum class pam_mode {
    keyboard_interactive, // prompts go to the client
    password,             // "password" method: every echo-off prompt is answered with the password
    account_only,         // no authentication: pam_acct_mgmt only (after publickey, as OpenSSH does)
};

// What OpenSSH hands PAM as the password of an invalid user, or of root
// when PermitRootLogin forbids passwords: PAM then fails after its usual
// delay, so the answer's timing does not tell which case it was.
inline constexpr const char* pam_bad_password = "\b\n\r\177INCORRECT";

struct pam_start_options {
    std::string service = "sshd"; // /etc/pam.d/<service>; tests use their own
    std::string user;
    std::string remote_host;      // PAM_RHOST (the canonical name with UseDNS, else the address)
    std::string ssh_connection;   // when set, "SSH_CONNECTION=<this>" goes into PAM's environment
    pam_mode mode = pam_mode::keyboard_interactive;
    std::string password;         // pam_mode::password
    // PermitEmptyPasswords no: PAM_DISALLOW_NULL_AUTHTOK, as OpenSSH.
    bool disallow_null_authtok = true;
    bool account_management = true; // run pam_acct_mgmt after a successful pam_authenticate
};

struct pam_prompt {
    std::string text;
    bool echo = false;
};

struct pam_event {
    enum class type { prompts, done };
    type kind = type::done;
    // PAM_TEXT_INFO / PAM_ERROR_MSG texts that came before (OpenSSH shows
    // them above the next prompt, or after login when none follows).
    std::vector<std::string> info;
    std::vector<pam_prompt> prompts; // type::prompts: answer every one, in order
    // type::done:
    bool success = false;
    int pam_status = 0;      // the failing call's PAM code (PAM_SUCCESS on success)
    std::string error;       // pam_strerror() of it
    bool account_failed = false;          // pam_acct_mgmt refused ("Access denied ... by PAM account configuration")
    bool password_change_required = false; // PAM_NEW_AUTHTOK_REQD in password/account mode (a failure)
    bool max_tries = false;               // PAM_MAXTRIES
};

// OpenSSH's presentation of an event to a keyboard-interactive client: the
// info lines, each followed by "\n", then the prompt text, in one prompt.
std::string kbdint_prompt_text(const pam_event& event, std::size_t prompt_index);

class pam_authenticator {
public:
    pam_authenticator();
    ~pam_authenticator(); // never blocks: a pending conversation is cancelled
    pam_authenticator(const pam_authenticator&) = delete;
    pam_authenticator& operator=(const pam_authenticator&) = delete;

    // pam_start() and the items, then the worker thread. invalid_argument
    // when already started; io_error, with `error` set, when pam_start or
    // pam_set_item fails.
    result<void> start(const pam_start_options& options, std::string& error);

    // Readable while an event is waiting (level-triggered: it stays
    // readable until poll() has taken the last one).
    int event_fd() const noexcept;
    std::optional<pam_event> poll();
    // Answers to the last prompts event, in order. protocol_error when no
    // prompts are outstanding or the count differs (the conversation then
    // fails, as a wrong answer would).
    result<void> respond(std::vector<std::string> answers);
    // Fails a pending conversation (the worker then reports done, failure).
    void cancel();
    bool finished() const noexcept;

    // --- The session side, after a successful done event (caller's thread) ---
    int set_tty(const std::string& tty);   // PAM_TTY, once a pty exists
    int establish_credentials();           // pam_setcred(PAM_ESTABLISH_CRED)
    int reinitialize_credentials();        // pam_setcred(PAM_REINITIALIZE_CRED)
    int delete_credentials();              // pam_setcred(PAM_DELETE_CRED)
    int open_session();                    // pam_open_session
    int close_session();                   // pam_close_session
    std::vector<std::string> environment(); // pam_getenvlist: "NAME=value"
    std::string strerror(int status) const;
    // In a child after fork() when the parent keeps the transaction: this
    // copy never closes the session or deletes credentials, and ends PAM
    // with PAM_DATA_SILENT (modules then leave the parent's state alone).
    void forget_after_fork() noexcept;

    struct state;

private:
    std::shared_ptr<state> state_;
};

} // namespace longhaul
