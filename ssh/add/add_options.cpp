#include "ssh/add/add_options.hpp"

#include "common/config_line.hpp"
#include "common/short_options.hpp"

#include <limits>

namespace longhaul::add {

namespace {

parsed_add_args usage(std::string why)
{
    return {std::nullopt, {1, std::move(why) + usage_text}};
}

parsed_add_args fatal(std::string message) { return {std::nullopt, {255, std::move(message) + "\r\n"}}; }

// OpenSSH's strtonum(…, 0, UINT_MAX) for -M and -m.
std::optional<std::uint32_t> parse_count(const std::string& s)
{
    if (s.empty() || s.size() > 10)
        return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (v > std::numeric_limits<std::uint32_t>::max())
        return std::nullopt;
    return static_cast<std::uint32_t>(v);
}

} // namespace

std::optional<std::uint32_t> parse_lifetime(const std::string& text)
{
    auto t = parse_time_interval(text);
    if (!t || *t < 0 || *t > std::numeric_limits<std::uint32_t>::max())
        return std::nullopt;
    return static_cast<std::uint32_t>(*t);
}

parsed_add_args parse_add_args(const std::vector<std::string>& args)
{
    add_options o;
    // -l/-L and -x/-X each remember which one came (a second is fatal);
    // -D is a third action; -d, -T, -s and -e modify the default one.
    char list_flag = 0, lock_flag = 0;
    bool delete_all = false, deleting = false, testing = false;
    // The first complaint ends the scan (OpenSSH's fatal()).
    std::optional<parsed_add_args> failed;
    auto fail = [&](parsed_add_args r) {
        failed = std::move(r);
        return false;
    };
    auto option = [&](char c, const std::string& arg) {
        switch (c) {
        case 'v': ++o.verbose; break;
        case 'k': o.key_only = true; break;
        case 'K': o.download_resident = true; break;
        case 'l':
        case 'L':
            // OpenSSH names the flag that came first.
            if (list_flag != 0)
                return fail(fatal(std::string("-") + list_flag + " flag already specified"));
            list_flag = c;
            break;
        case 'x':
        case 'X':
            if (lock_flag != 0)
                return fail(fatal(std::string("-") + lock_flag + " flag already specified"));
            lock_flag = c;
            break;
        case 'c': o.confirm = true; break;
        case 'd': deleting = true; break;
        case 'D': delete_all = true; break;
        case 'T': testing = true; break;
        case 'q': o.quiet = true; break;
        case 'E': {
            auto h = parse_fingerprint_hash(arg);
            // ssh_digest_alg_by_name knows more than -E's md5 and
            // sha256; OpenSSH accepts them all here.
            if (!h)
                return fail(fatal("Invalid hash algorithm \"" + arg + "\""));
            o.hash = *h;
            break;
        }
        case 'e':
            deleting = true;
            o.pkcs11_provider = arg;
            break;
        case 's': o.pkcs11_provider = arg; break;
        case 'h': o.destinations.push_back(arg); break;
        case 'H': o.hostkey_files.push_back(arg); break;
        case 'S': o.sk_provider = arg; break;
        case 'M':
        case 'm': {
            auto n = parse_count(arg);
            if (!n)
                return fail(fatal(std::string("Invalid ") + (c == 'M' ? "maxsign" : "minleft") + " argument: " + arg));
            (c == 'M' ? o.maxsign : o.minleft) = *n;
            break;
        }
        case 't': {
            auto t = parse_lifetime(arg);
            if (!t)
                return fail({std::nullopt, {1, "Invalid lifetime\n"}});
            o.lifetime = *t;
            break;
        }
        }
        return true;
    };
    const auto scan = scan_short_options(args, 0, "vkKlLcdDTxXE:e:h:H:M:m:qs:S:t:", option);
    if (failed)
        return std::move(*failed);
    if (!scan.ok())
        return usage(scan.error + "\r\n");
    o.files.assign(args.begin() + static_cast<std::ptrdiff_t>(scan.next), args.end());

    if ((lock_flag != 0) + (list_flag != 0) + (delete_all ? 1 : 0) > 1)
        return fatal("Invalid combination of actions");
    if (lock_flag != 0)
        o.what = lock_flag == 'x' ? action::lock : action::unlock;
    else if (list_flag != 0)
        o.what = list_flag == 'l' ? action::list_fingerprints : action::list_public;
    else if (delete_all)
        o.what = action::remove_all;
    else if (testing)
        o.what = action::test;
    else if (o.pkcs11_provider)
        o.what = deleting ? action::remove_pkcs11 : action::add_pkcs11;
    else if (o.download_resident) // before -d, which it ignores, as OpenSSH's main()
        o.what = action::load_resident;
    else if (deleting)
        o.what = action::remove;
    if (o.what == action::test && o.files.empty())
        return fatal("no keys to test");
    return {std::move(o), {}};
}

std::optional<std::string> unsupported_option(const add_options& o)
{
    // Only what adds keys sends them.
    if ((o.what == action::add || o.what == action::load_resident) && (o.maxsign || o.minleft))
        return "ssh-add: XMSS signature limits (-M, -m) are not supported yet";
    return std::nullopt;
}

std::string security_key_provider(const add_options& o, const char* env_provider)
{
    // OpenSSH: -S, else $SSH_SK_PROVIDER as it is (even empty), else the
    // built-in "internal" (Debian builds with ENABLE_SK_INTERNAL). Sent
    // verbatim: the agent resolves a relative path in its own cwd.
    if (o.sk_provider)
        return *o.sk_provider;
    if (env_provider != nullptr)
        return env_provider;
    return "internal";
}

} // namespace longhaul::add
