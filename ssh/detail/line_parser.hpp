// The cursor over one ssh_config line's arguments, with the argument
// parsers most keywords share (flags, multi-state words, numbers, times,
// strings, lists, algorithm lists) and OpenSSH's error wording for them.
#pragma once

#include "common/config_line.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/detail/config_keywords.hpp"
#include "ssh/detail/config_parser.hpp"
#include "ssh/detail/config_values.hpp"
#include "ssh/tokens.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace longhaul::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; }

// One line being processed: the arguments, a cursor over them, and the
// "file line N: " prefix of messages.
class line_parser {
public:
    line_parser(parse_state& st, std::string_view filename, int linenum, std::string keyword,
                const std::vector<std::string>& args, bool active)
        : st_(st), filename_(filename), linenum_(linenum), keyword_(std::move(keyword)), args_(args),
          active_(active)
    {
    }

    const std::string* next() { return pos_ < args_.size() ? &args_[pos_++] : nullptr; }
    std::size_t left() const { return args_.size() - pos_; }
    void consume_all() { pos_ = args_.size(); }
    bool active() const { return active_; }
    const std::string& keyword() const { return keyword_; }
    client_config& cfg() { return st_.cfg; }
    parse_state& state() { return st_; }

    // "file line N: text" (OpenSSH writes "%s line %d" or "%.200s line %d").
    bool fail(const std::string& text, bool short_name = false)
    {
        st_.emit(log_level::error, where(short_name) + text);
        return false;
    }
    std::string where(bool short_name = false) const
    {
        std::string f(filename_);
        if (short_name && f.size() > 200)
            f.resize(200);
        return f + " line " + std::to_string(linenum_) + ": ";
    }
    [[noreturn]] void fatal(const std::string& text) { throw ssh_config_error(where() + text); }

    template <class T>
    void set(std::optional<T>& field, T value)
    {
        if (active_ && !field)
            field = std::move(value);
    }

    bool missing_argument(const std::string* arg) { return arg == nullptr || arg->empty(); }

    template <class T>
    bool multistate(std::optional<T>& field, std::span<const state_word<T>> words)
    {
        const std::string* arg = next();
        std::optional<T> v;
        if (arg != nullptr)
            v = parse_word(words, *arg);
        if (!v)
            return fail("unsupported option \"" + (arg ? *arg : std::string("(null)")) + "\".");
        set(field, *v);
        return true;
    }
    bool flag(std::optional<bool>& field) { return multistate(field, flag_words()); }

    bool string(std::optional<std::string>& field)
    {
        const std::string* arg = next();
        if (missing_argument(arg))
            return fail("Missing argument.", true);
        set(field, *arg);
        return true;
    }

    bool integer(std::optional<int>& field)
    {
        int v = 0;
        const std::string* arg = next();
        if (const char* err = atoi_err(arg ? std::string_view(*arg) : std::string_view{}, v))
            return fail(std::string("integer value ") + err + ".");
        set(field, v);
        return true;
    }

    bool time(std::optional<int>& field)
    {
        const std::string* arg = next();
        if (missing_argument(arg))
            return fail("missing time value.");
        // "none" is OpenSSH's "unset" value (-1): it sets nothing, so a later
        // line may still give a value.
        if (*arg == "none")
            return true;
        auto t = parse_time_interval(*arg);
        if (!t)
            return fail("invalid time value.");
        set(field, static_cast<int>(*t));
        return true;
    }

    // The rest of the line, verbatim (ProxyCommand, LocalCommand, ...).
    bool command(std::optional<std::string>& field, std::string_view raw)
    {
        if (active_ && !field)
            field = std::string(raw);
        consume_all();
        return true;
    }

    // GlobalKnownHostsFile / UserKnownHostsFile / LogVerbose: a list set
    // only if empty when the line started; "none" must stand alone.
    bool list(std::vector<std::string>& field, std::size_t max_entries)
    {
        const bool was_empty = field.empty();
        std::size_t i = 0;
        while (const std::string* arg = next()) {
            if (arg->empty())
                return fail("keyword " + keyword_ + " empty argument");
            if (iequals(*arg, "none") && (i > 0 || left() > 0))
                return fail("keyword " + keyword_ + " \"none\" argument must appear alone.");
            ++i;
            if (active_ && was_empty) {
                if (field.size() >= max_entries)
                    return fail("too many " + keyword_ + " entries.");
                field.push_back(*arg);
            }
        }
        return true;
    }

    bool algorithms(std::optional<std::string>& field, kw op)
    {
        const std::string* arg = next();
        if (missing_argument(arg))
            return fail("Missing argument.", true);
        const std::string& a = *arg;
        if (a[0] != '-') {
            std::string_view names = a;
            if (a[0] == '+' || a[0] == '^')
                names.remove_prefix(1);
            switch (op) {
            case kw::ciphers:
                if (!cipher_list_valid(names))
                    return fail("Bad SSH2 cipher spec '" + a + "'.", true);
                break;
            case kw::macs:
                if (!mac_list_valid(names))
                    return fail("Bad SSH2 MAC spec '" + a + "'.", true);
                break;
            case kw::kex_algorithms:
            case kw::gssapi_kex_algorithms: {
                std::string bad;
                if (!kex_list_valid(names, bad) && op == kw::kex_algorithms) {
                    if (!bad.empty())
                        st_.emit(log_level::error, "Unsupported KEX algorithm \"" + bad.substr(0, 100) + "\"");
                    return fail("Bad SSH2 KexAlgorithms '" + a + "'.", true);
                }
                break;
            }
            default:
                if (!key_algorithm_list_valid(names))
                    return fail("Bad key types '" + a + "'.");
                break;
            }
        }
        set(field, a);
        return true;
    }

    bool agent_path(std::optional<std::string>& field, const std::string& arg)
    {
        std::string err;
        if (!dollar_expand(arg, st_.env.getenv, err)) {
            st_.emit(log_level::error, err);
            return fail("Invalid environment expansion " + arg + ".", true);
        }
        if (!arg.empty() && arg[0] == '$' && (arg.size() == 1 || arg[1] != '{')) {
            // Legacy "$NAME": NAME must be a valid environment variable name.
            bool ok = arg.size() > 1;
            for (std::size_t i = 1; i < arg.size() && ok; ++i)
                ok = std::isalnum(static_cast<unsigned char>(arg[i])) || arg[i] == '_';
            if (!ok)
                return fail("Invalid environment name " + arg + ".", true);
        }
        set(field, arg);
        return true;
    }

private:
    parse_state& st_;
    std::string_view filename_;
    int linenum_;
    std::string keyword_;
    const std::vector<std::string>& args_;
    std::size_t pos_ = 0;
    bool active_;
};

} // namespace longhaul::detail
