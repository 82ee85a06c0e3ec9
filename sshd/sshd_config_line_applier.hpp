// Internal to sshd_config_apply*.cpp: the state of one sshd_config line
// being applied, and the argument parsers its keywords share. Declared here
// so that the keyword switch (sshd_config_apply.cpp) and the keywords with a
// syntax of their own (sshd_config_apply_syntax.cpp) are separate files.
#pragma once

#include "sshd/sshd_config_internal.hpp"
#include "sshd/sshd_config_syntax.hpp"

#include "common/config_line.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"
#include "sshd/sshd_algorithms.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::detail {

// The state of one line being applied.
class line_applier {
public:
    line_applier(const line_context& ctx, config_draft& d, parse_log& log)
        : ctx_(ctx), e_(ctx.entry), d_(d), cfg_(d.cfg), log_(log),
          where_((ctx.reprocess ? std::string("reprocess config") : e_.file) + " line " + std::to_string(e_.line)),
          kw_(e_.keyword_text)
    {
    }

    bool run();

private:
    [[noreturn]] void fatal(const std::string& what) const { log_.fatal(where_ + ": " + what); }
    bool error(const std::string& what)
    {
        log_.error(where_ + ": " + what);
        return false;
    }
    const std::string* next()
    {
        if (pos_ >= e_.args.size())
            return nullptr;
        return &e_.args[pos_++];
    }
    const std::string* peek() const { return pos_ < e_.args.size() ? &e_.args[pos_] : nullptr; }
    void consume_all() { pos_ = e_.args.size(); }
    bool active() const { return ctx_.active; }
    // First-value-wins: true once per keyword and layer, for active lines.
    bool take()
    {
        const auto i = static_cast<std::size_t>(e_.keyword->id);
        if (!ctx_.active || d_.seen[i])
            return false;
        d_.seen[i] = true;
        return true;
    }
    // For keywords where the last value wins: marks the layer as having set it.
    bool mark()
    {
        if (!ctx_.active)
            return false;
        d_.seen[static_cast<std::size_t>(e_.keyword->id)] = true;
        return true;
    }
    // For accumulating lists: the first occurrence in a layer replaces what
    // the layer inherited (defaults, or the global value in a Match layer).
    void accumulate(std::vector<std::string>& list, std::string value)
    {
        const auto i = static_cast<std::size_t>(e_.keyword->id);
        if (!d_.seen[i]) {
            list.clear();
            d_.seen[i] = true;
        }
        list.push_back(std::move(value));
    }

    template <class T, class Parse>
    void multistate(T& field, Parse parse)
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("missing argument.");
        auto v = parse(*arg);
        if (!v)
            fatal("unsupported option \"" + *arg + "\".");
        if (take())
            field = *v;
    }
    void flag(bool& field) { multistate(field, parse_flag); }
    void int_value(int& field)
    {
        const std::string* arg = next();
        int v = 0;
        if (const char* why = atoi_err(arg ? std::string_view(*arg) : std::string_view{}, v))
            fatal(kw_ + " integer value " + why + ".");
        if (take())
            field = v;
    }
    int time_value()
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("missing time value.");
        auto v = parse_time_interval(*arg);
        if (!v)
            fatal("invalid time value.");
        return static_cast<int>(*v);
    }
    void time_option(int& field)
    {
        const int v = time_value();
        if (take())
            field = v;
    }
    const std::string& required(const char* missing_format)
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal(missing_format);
        return *arg;
    }
    const std::string& required_kw() { return required((kw_ + " missing argument.").c_str()); }
    void filename(std::string& field)
    {
        const std::string& arg = required("missing file name.");
        if (take())
            field = derelativise_path(arg);
    }
    void algorithms(spec_origin& origin, sshd_algorithm_list kind, const char* bad)
    {
        const std::string& arg = required_kw();
        if (arg[0] != '-' && !sshd_algorithm_spec_valid(kind, arg)) {
            if (kind == sshd_algorithm_list::kex)
                log_.error("Unsupported KEX algorithm \"" + first_unknown(kind, arg).substr(0, 100) + "\"");
            fatal(std::string(bad) + " '" + arg + "'.");
        }
        if (take())
            origin = {arg, where_};
    }
    void key_algorithms(spec_origin& origin)
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("Missing argument.");
        if ((*arg)[0] != '-' && !sshd_algorithm_spec_valid(sshd_algorithm_list::key, *arg))
            fatal("Bad key types '" + *arg + "'.");
        if (take())
            origin = {*arg, where_};
    }
    void user_patterns(std::vector<std::string>& list)
    {
        while (const std::string* arg = next()) {
            bool ok = !arg->empty();
            if (ok) {
                const auto at = arg->find('@');
                if (at != std::string::npos) {
                    ok = addr_match_list({}, std::string_view(*arg).substr(at + 1)) != addr_list_result::invalid;
                }
            }
            if (!ok)
                fatal("invalid " + kw_ + " pattern: \"" + *arg + "\"");
            if (active())
                accumulate(list, *arg);
        }
    }
    void group_patterns(std::vector<std::string>& list)
    {
        while (const std::string* arg = next()) {
            if (arg->empty())
                fatal("empty " + kw_ + " pattern");
            if (active())
                accumulate(list, *arg);
        }
    }
    void permit_list(std::vector<std::string>& list, bool listen)
    {
        const std::string& first = required_kw();
        const bool apply = take();
        if (first == "any" || first == "none") {
            if (apply)
                list = {first};
            return;
        }
        if (apply)
            list.clear();
        for (const std::string* arg = &first; arg != nullptr && !arg->empty(); arg = next()) {
            std::string entry = *arg;
            std::optional<std::string_view> port;
            if (listen && arg->find(':') == std::string::npos) {
                entry = "*:" + *arg;
                port = *arg;
            } else {
                const auto f = hpdelim(*arg);
                if (!f)
                    fatal(kw_ + " missing host");
                if (f->more)
                    port = f->rest;
            }
            const bool port_ok = port && (*port == "*" || parse_port(*port) > 0);
            if (!port_ok)
                fatal(kw_ + " bad port number");
            if (apply)
                list.push_back(entry);
        }
    }
    void listen_address();
    void rekey_limit();
    void subsystem();
    void authentication_methods();
    bool log_verbose();
    bool channel_timeout();
    void rest_of_line(std::string& field, bool command);
    void deprecated(const char* what);
    // A setting this server cannot enforce yet: refused at start-up (sshd
    // and sshd -t), in Match blocks too, never accepted and ignored.
    [[noreturn]] void not_supported(const std::string& setting) const
    {
        fatal(setting + " is not supported yet");
    }

    const line_context& ctx_;
    const config_entry& e_;
    config_draft& d_;
    server_config& cfg_;
    parse_log& log_;
    std::string where_;
    std::string kw_;
    std::size_t pos_ = 0;
};

} // namespace longhaul::detail
