// sftp: OpenSSH's interactive and batch SFTP client over Longhaul's
// pipelined SFTP engine.
#include "ssh/sftp/sftp_args.hpp"
#include "ssh/sftp/sftp_command_line.hpp"
#include "ssh/sftp/sftp_commands.hpp"
#include "ssh/sftp/sftp_line_editor.hpp"
#include "ssh/sftp_client/text.hpp"
#include "ssh/sftp_client/tree.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

using namespace longhaul;
using namespace longhaul::sftp_cli;

namespace {

// The SIGINT flag: a transfer in progress stops and the prompt returns.
// A signal handler can reach only a static object.
std::atomic<bool> interrupted{false};

void on_sigint(int)
{
    interrupted.store(true);
}

void to_stderr(const std::string& s)
{
    const std::string line = s + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

// OpenSSH's log functions end a line on stderr with CR LF.
void log_line(const std::string& s)
{
    to_stderr(s + "\r");
}

int run(const sftp_options& o)
{
    sftp::output_sink out;
    out.error = log_line;
    out.info = log_line;
    const int verbose = o.verbose;
    out.debug = [verbose](int level, const std::string& m) {
        if (level <= verbose)
            log_line(sftp::strprintf("debug%d: %s", level, m.c_str()));
    };
    out.print = [](const std::string& m) {
        std::fputs((m + "\n").c_str(), stdout);
        std::fflush(stdout);
    };
    FILE* in = stdin;
    if (o.batch && o.batch_file != "-") {
        in = std::fopen(o.batch_file.c_str(), "r");
        if (in == nullptr) {
            to_stderr(sftp::strprintf("%s (%s).", std::strerror(errno), o.batch_file.c_str()));
            return 255;
        }
    }
    sftp::session_options so;
    so.buffer_size = o.buffer_size;
    so.num_requests = o.num_requests;
    so.limit_bps = o.limit_kbps * 1024;
    so.threaded_io = true;
    std::vector<std::string> argv;
    if (!o.sftp_direct.empty())
        argv = {"/bin/sh", "-c", "exec " + o.sftp_direct};
    else
        argv = ssh_argv(o);
    // A batch file is read one line ahead, so that its last command is
    // known as such (sftp_shell::set_last_line). Not a pipe or a terminal:
    // whoever writes there may wait for this command's output first. (An
    // editor runs only on a terminal.)
    const bool interactive = !o.batch && ::isatty(STDIN_FILENO);
    struct stat in_st{};
    const bool look_ahead = !interactive && ::fstat(::fileno(in), &in_st) == 0 && S_ISREG(in_st.st_mode);
    const auto read_raw = [in]() -> std::optional<std::string> {
        char buf[8192];
        if (std::fgets(buf, sizeof buf, in) == nullptr)
            return std::nullopt;
        return std::string(buf);
    };
    std::optional<std::string> ahead;
    bool have_ahead = false;
    shell_settings settings;
    settings.batch = o.batch;
    settings.quiet = o.quiet;
    settings.show_progress = o.show_progress && ::isatty(STDOUT_FILENO);
    settings.preserve = o.preserve;
    settings.recursive = o.recursive;
    settings.resume = o.resume;
    settings.fsync = o.fsync;
    settings.echo = !interactive;
    sftp_shell::early_lookups first;
    if (look_ahead && o.file1.empty()) {
        ahead = read_raw();
        have_ahead = true;
        if (ahead)
            first = sftp_shell::first_flight(*ahead, settings);
    }
    std::string error;
    // The shell's first request is REALPATH "." (its working directory):
    // it goes out with INIT, and with them the first command's lookups.
    auto conn = sftp::connection::open(argv, so, out, error, true, [&first](sftp::remote_fs& fs) {
        fs.prefetch_realpath(".");
        if (first.stat_path)
            fs.prefetch_stat(*first.stat_path);
        if (first.open)
            fs.prefetch_open(*first.open);
    });
    if (!conn) {
        log_line(error);
        return 255;
    }
    if (!o.quiet)
        to_stderr(o.sftp_direct.empty() ? "Connected to " + o.host + "." : "Attached to " + o.sftp_direct + ".");
    // ^C interrupts a command (a transfer stops and the prompt returns);
    // at the prompt it is ignored, as in OpenSSH's sftp.
    struct sigaction on_command{}, at_prompt{};
    on_command.sa_handler = on_sigint;
    ::sigemptyset(&on_command.sa_mask);
    at_prompt.sa_handler = SIG_IGN;
    ::sigemptyset(&at_prompt.sa_mask);
    conn->sess().set_interrupt(&interrupted);

    sftp_shell shell(*conn, settings, out, &interrupted);
    int err = 0;
    if (!shell.start())
        return 1;
    bool done = false;
    if (!o.file1.empty()) {
        ::sigaction(SIGINT, &on_command, nullptr);
        err = shell.initial_path(o.file1, o.file2, done);
        if (done || err != 0) {
            conn->close();
            return err == 0 ? 0 : 1;
        }
    }
    std::unique_ptr<line_editor> editor;
    if (interactive)
        editor = std::make_unique<line_editor>(shell);
    for (;;) {
        ::sigaction(SIGINT, &at_prompt, nullptr);
        interrupted.store(false);
        std::string line;
        if (editor) {
            auto l = editor->read();
            if (!l) {
                std::printf("\n");
                break;
            }
            line = *l;
        } else {
            std::optional<std::string> l = have_ahead ? std::move(ahead) : read_raw();
            have_ahead = false;
            if (!l) {
                if (interactive)
                    std::printf("\n");
                break;
            }
            line = std::move(*l);
            if (look_ahead) {
                ahead = read_raw();
                have_ahead = true;
                shell.set_last_line(!ahead);
            }
        }
        ::sigaction(SIGINT, &on_command, nullptr);
        err = shell.run_line(line);
        if (!conn->sess().ok()) {
            log_line(conn->sess().core().failure().empty() ? "Connection closed" : conn->sess().core().failure());
            return 255;
        }
        if (err != 0)
            break;
    }
    if (in != stdin)
        std::fclose(in);
    conn->close();
    return err >= 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    ::signal(SIGPIPE, SIG_IGN);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        const sftp_options o = parse_command_line(argc, argv);
        return run(o);
    } catch (const usage_error& e) {
        if (*e.what())
            std::cerr << e.what() << "\n";
        std::cerr << usage_text();
        return 1;
    } catch (const option_error& e) {
        std::cerr << e.what() << "\r\n"; // OpenSSH's fatal()
        return 255;
    }
}
