#include "sshd/pam_backend.hpp"

#include <security/pam_appl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace longhaul {

struct pam_authenticator::state {
    std::mutex m;
    std::condition_variable cv;
    int efd = -1;
    std::deque<pam_event> events;
    std::vector<std::string> pending_info; // info texts not yet delivered
    std::optional<std::vector<std::string>> answers;
    std::size_t expected_answers = 0;
    bool awaiting = false;
    bool cancelled = false;
    bool done = false;
    bool session_open = false;
    bool credentials = false;
    bool forked_copy = false; // forget_after_fork(): the parent owns PAM
    int last_status = PAM_SUCCESS;
    pam_handle_t* pamh = nullptr;
    pam_start_options options;
    pam_conv conv{};
    std::thread worker;

    ~state()
    {
        // The owner is gone (or the worker finished last): tidy up PAM.
        if (pamh != nullptr) {
            if (session_open)
                (void)pam_close_session(pamh, PAM_SILENT);
            if (credentials)
                (void)pam_setcred(pamh, PAM_DELETE_CRED | PAM_SILENT);
            (void)pam_end(pamh, last_status | (forked_copy ? PAM_DATA_SILENT : 0));
        }
        if (!options.password.empty())
            OPENSSL_cleanse(options.password.data(), options.password.size());
        if (efd != -1)
            ::close(efd);
    }

    // Queues an event and makes the eventfd readable (lock held).
    void post(pam_event ev)
    {
        events.push_back(std::move(ev));
        const std::uint64_t one = 1;
        (void)!::write(efd, &one, sizeof one);
    }
};

namespace {

using state = pam_authenticator::state;

void free_responses(pam_response* r, int n)
{
    if (r == nullptr)
        return;
    for (int i = 0; i < n; ++i) {
        if (r[i].resp != nullptr) {
            OPENSSL_cleanse(r[i].resp, std::strlen(r[i].resp));
            std::free(r[i].resp);
        }
    }
    std::free(r);
}

// PAM's conversation, on the worker thread.
int conversation(int n, const pam_message** msg, pam_response** resp, void* appdata)
{
    auto* st = static_cast<state*>(appdata);
    *resp = nullptr;
    if (n <= 0 || n > PAM_MAX_NUM_MSG)
        return PAM_CONV_ERR;
    auto* replies = static_cast<pam_response*>(std::calloc(static_cast<std::size_t>(n), sizeof(pam_response)));
    if (replies == nullptr)
        return PAM_BUF_ERR;
    std::unique_lock lock(st->m);
    pam_event ev;
    ev.kind = pam_event::type::prompts;
    std::vector<int> prompt_index;
    for (int i = 0; i < n; ++i) {
        const int style = msg[i]->msg_style;
        const std::string text = msg[i]->msg ? msg[i]->msg : "";
        switch (style) {
        case PAM_PROMPT_ECHO_OFF:
        case PAM_PROMPT_ECHO_ON:
            if (st->options.mode == pam_mode::password) {
                // OpenSSH answers every hidden prompt with the password and
                // refuses visible ones.
                if (style == PAM_PROMPT_ECHO_ON) {
                    free_responses(replies, n);
                    return PAM_CONV_ERR;
                }
                replies[i].resp = ::strdup(st->options.password.c_str());
                if (replies[i].resp == nullptr) {
                    free_responses(replies, n);
                    return PAM_BUF_ERR;
                }
                break;
            }
            if (st->options.mode == pam_mode::account_only) {
                free_responses(replies, n);
                return PAM_CONV_ERR;
            }
            ev.prompts.push_back({text, style == PAM_PROMPT_ECHO_ON});
            prompt_index.push_back(i);
            break;
        case PAM_ERROR_MSG:
        case PAM_TEXT_INFO:
            st->pending_info.push_back(text);
            break;
        default:
            free_responses(replies, n);
            return PAM_CONV_ERR;
        }
    }
    if (ev.prompts.empty()) {
        *resp = replies;
        return PAM_SUCCESS;
    }
    ev.info = std::move(st->pending_info);
    st->pending_info.clear();
    st->expected_answers = ev.prompts.size();
    st->answers.reset();
    st->awaiting = true;
    st->post(std::move(ev));
    st->cv.wait(lock, [&] { return st->cancelled || st->answers.has_value(); });
    st->awaiting = false;
    if (st->cancelled || st->answers->size() != prompt_index.size()) {
        st->answers.reset();
        free_responses(replies, n);
        return PAM_CONV_ERR;
    }
    for (std::size_t k = 0; k < prompt_index.size(); ++k) {
        auto& a = (*st->answers)[k];
        replies[prompt_index[k]].resp = ::strdup(a.c_str());
        OPENSSL_cleanse(a.data(), a.size());
        if (replies[prompt_index[k]].resp == nullptr) {
            st->answers.reset();
            free_responses(replies, n);
            return PAM_BUF_ERR;
        }
    }
    st->answers.reset();
    *resp = replies;
    return PAM_SUCCESS;
}

void run_worker(std::shared_ptr<state> st)
{
    pam_event done;
    done.kind = pam_event::type::done;
    int rc = PAM_SUCCESS;
    const int flags = st->options.disallow_null_authtok ? PAM_DISALLOW_NULL_AUTHTOK : 0;
    if (st->options.mode != pam_mode::account_only) {
        rc = pam_authenticate(st->pamh, flags);
        done.max_tries = rc == PAM_MAXTRIES;
    }
    if (rc == PAM_SUCCESS && (st->options.account_management || st->options.mode == pam_mode::account_only)) {
        const int acct = pam_acct_mgmt(st->pamh, flags);
        if (acct == PAM_NEW_AUTHTOK_REQD) {
            if (st->options.mode == pam_mode::keyboard_interactive) {
                // The user can answer prompts: change the password now.
                rc = pam_chauthtok(st->pamh, PAM_CHANGE_EXPIRED_AUTHTOK);
            } else {
                // Only keyboard-interactive can hold the conversation that
                // changes it; letting the user in unchanged would bypass the
                // expiry, so this is a failure.
                done.password_change_required = true;
                rc = acct;
            }
        } else if (acct != PAM_SUCCESS) {
            rc = acct;
            done.account_failed = true;
        }
    }
    std::lock_guard lock(st->m);
    done.success = rc == PAM_SUCCESS && !st->cancelled;
    done.pam_status = rc;
    done.error = pam_strerror(st->pamh, rc);
    done.info = std::move(st->pending_info);
    st->pending_info.clear();
    st->last_status = rc;
    st->done = true;
    st->post(std::move(done));
}

} // namespace

std::string kbdint_prompt_text(const pam_event& event, std::size_t prompt_index)
{
    std::string text;
    if (prompt_index == 0)
        for (const auto& i : event.info)
            text += i + "\n";
    if (prompt_index < event.prompts.size())
        text += event.prompts[prompt_index].text;
    return text;
}

pam_authenticator::pam_authenticator() = default;

pam_authenticator::~pam_authenticator()
{
    if (!state_)
        return;
    bool done;
    {
        std::lock_guard lock(state_->m);
        state_->cancelled = true;
        done = state_->done;
    }
    state_->cv.notify_all();
    // A module may still be busy (a failure delay, a slow directory): the
    // worker holds its own reference and ends PAM when it returns.
    if (state_->worker.joinable()) {
        if (done)
            state_->worker.join();
        else
            state_->worker.detach();
    }
}

result<void> pam_authenticator::start(const pam_start_options& options, std::string& error)
{
    if (state_) {
        error = "PAM already started";
        return errc::invalid_argument;
    }
    auto st = std::make_shared<state>();
    st->options = options;
    st->efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (st->efd == -1) {
        error = std::string("eventfd: ") + std::strerror(errno);
        return errc::io_error;
    }
    st->conv.conv = conversation;
    st->conv.appdata_ptr = st.get();
    int rc = pam_start(options.service.c_str(), options.user.c_str(), &st->conv, &st->pamh);
    if (rc != PAM_SUCCESS) {
        error = std::string("PAM: initialisation failed: ") + pam_strerror(st->pamh, rc);
        if (st->pamh != nullptr) {
            pam_end(st->pamh, rc);
            st->pamh = nullptr;
        }
        return errc::io_error;
    }
    if (!options.ssh_connection.empty()) {
        const std::string env = "SSH_CONNECTION=" + options.ssh_connection;
        rc = pam_putenv(st->pamh, env.c_str());
        if (rc != PAM_SUCCESS)
            error = std::string("pam_putenv: ") + pam_strerror(st->pamh, rc);
    }
    if (!options.remote_host.empty()) {
        rc = pam_set_item(st->pamh, PAM_RHOST, options.remote_host.c_str());
        if (rc != PAM_SUCCESS) {
            error = std::string("PAM: failed to set PAM_RHOST: ") + pam_strerror(st->pamh, rc);
            return errc::io_error;
        }
    }
    // Some modules (pam_time, pam_access) want a TTY during authentication;
    // sshd has none yet, so it says "ssh" as OpenSSH does.
    rc = pam_set_item(st->pamh, PAM_TTY, "ssh");
    if (rc != PAM_SUCCESS) {
        error = std::string("PAM: failed to set PAM_TTY: ") + pam_strerror(st->pamh, rc);
        return errc::io_error;
    }
    state_ = st;
    st->worker = std::thread(run_worker, st);
    return {};
}

int pam_authenticator::event_fd() const noexcept { return state_ ? state_->efd : -1; }

std::optional<pam_event> pam_authenticator::poll()
{
    if (!state_)
        return std::nullopt;
    std::unique_lock lock(state_->m);
    if (state_->events.empty())
        return std::nullopt;
    pam_event ev = std::move(state_->events.front());
    state_->events.pop_front();
    if (state_->events.empty()) {
        std::uint64_t drained;
        (void)!::read(state_->efd, &drained, sizeof drained);
    }
    const bool finished_now = ev.kind == pam_event::type::done;
    lock.unlock();
    if (finished_now && state_->worker.joinable())
        state_->worker.join();
    return ev;
}

result<void> pam_authenticator::respond(std::vector<std::string> answers)
{
    if (!state_)
        return errc::protocol_error;
    bool ok;
    {
        std::lock_guard lock(state_->m);
        if (!state_->awaiting || state_->answers.has_value()) {
            for (auto& a : answers)
                OPENSSL_cleanse(a.data(), a.size());
            return errc::protocol_error;
        }
        ok = answers.size() == state_->expected_answers;
        state_->answers = std::move(answers);
    }
    state_->cv.notify_all();
    if (!ok)
        return errc::protocol_error;
    return {};
}

void pam_authenticator::cancel()
{
    if (!state_)
        return;
    {
        std::lock_guard lock(state_->m);
        state_->cancelled = true;
    }
    state_->cv.notify_all();
}

bool pam_authenticator::finished() const noexcept
{
    if (!state_)
        return false;
    std::lock_guard lock(state_->m);
    return state_->done;
}

namespace {

// Session calls need the worker to be gone: PAM handles are not for two threads.
pam_handle_t* session_handle(const std::shared_ptr<pam_authenticator::state>& st)
{
    if (!st)
        return nullptr;
    std::lock_guard lock(st->m);
    if (!st->done || st->worker.joinable())
        return nullptr;
    return st->pamh;
}

} // namespace

int pam_authenticator::set_tty(const std::string& tty)
{
    pam_handle_t* h = session_handle(state_);
    return h ? pam_set_item(h, PAM_TTY, tty.c_str()) : PAM_SYSTEM_ERR;
}

int pam_authenticator::establish_credentials()
{
    pam_handle_t* h = session_handle(state_);
    if (h == nullptr)
        return PAM_SYSTEM_ERR;
    const int rc = pam_setcred(h, PAM_ESTABLISH_CRED);
    if (rc == PAM_SUCCESS)
        state_->credentials = true;
    return rc;
}

int pam_authenticator::reinitialize_credentials()
{
    pam_handle_t* h = session_handle(state_);
    return h ? pam_setcred(h, PAM_REINITIALIZE_CRED) : PAM_SYSTEM_ERR;
}

int pam_authenticator::delete_credentials()
{
    pam_handle_t* h = session_handle(state_);
    if (h == nullptr)
        return PAM_SYSTEM_ERR;
    state_->credentials = false;
    return pam_setcred(h, PAM_DELETE_CRED);
}

int pam_authenticator::open_session()
{
    pam_handle_t* h = session_handle(state_);
    if (h == nullptr)
        return PAM_SYSTEM_ERR;
    const int rc = pam_open_session(h, 0);
    if (rc == PAM_SUCCESS)
        state_->session_open = true;
    return rc;
}

void pam_authenticator::forget_after_fork() noexcept
{
    if (!state_)
        return;
    // No worker runs in this process: the thread object is the parent's.
    if (state_->worker.joinable())
        state_->worker.detach();
    state_->session_open = false;
    state_->credentials = false;
    state_->forked_copy = true;
}

int pam_authenticator::close_session()
{
    pam_handle_t* h = session_handle(state_);
    if (h == nullptr || !state_->session_open)
        return PAM_SYSTEM_ERR;
    state_->session_open = false;
    return pam_close_session(h, 0);
}

std::vector<std::string> pam_authenticator::environment()
{
    std::vector<std::string> out;
    pam_handle_t* h = session_handle(state_);
    if (h == nullptr)
        return out;
    char** list = pam_getenvlist(h);
    if (list == nullptr)
        return out;
    for (char** p = list; *p != nullptr; ++p) {
        out.emplace_back(*p);
        std::free(*p);
    }
    std::free(list);
    return out;
}

std::string pam_authenticator::strerror(int status) const
{
    return pam_strerror(state_ ? state_->pamh : nullptr, status);
}

} // namespace longhaul
