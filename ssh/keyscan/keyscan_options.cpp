// ssh-keyscan's command line, as OpenSSH 9.2's main(): same options, same
// messages, same exit statuses (1 for usage errors, 255 for fatal()).
// fatal()'s messages go through OpenSSH's log, which ends lines in "\r\n";
// the fprintf()s of usage errors end in "\n".
#include "ssh/keyscan/keyscan_options.hpp"

#include "common/config_line.hpp"
#include "common/short_options.hpp"
#include "common/text_parse.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>
#include <strings.h>

namespace longhaul {

std::string_view keyscan_host_key_algorithms(keyscan_type type, bool certificates) noexcept
{
    switch (type) {
    case kt_dsa: return certificates ? "ssh-dss-cert-v01@openssh.com" : "ssh-dss";
    case kt_rsa:
        return certificates ? "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,"
                              "ssh-rsa-cert-v01@openssh.com"
                            : "rsa-sha2-512,rsa-sha2-256,ssh-rsa";
    case kt_ecdsa:
        return certificates ? "ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-cert-v01@openssh.com,"
                              "ecdsa-sha2-nistp521-cert-v01@openssh.com"
                            : "ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521";
    case kt_ed25519: return certificates ? "ssh-ed25519-cert-v01@openssh.com" : "ssh-ed25519";
    case kt_ecdsa_sk:
        return certificates ? "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com" : "sk-ecdsa-sha2-nistp256@openssh.com";
    case kt_ed25519_sk:
        return certificates ? "sk-ssh-ed25519-cert-v01@openssh.com" : "sk-ssh-ed25519@openssh.com";
    }
    return {};
}

std::optional<keyscan_type> keyscan_type_from_name(std::string_view name) noexcept
{
    // sshkey_type_from_name(): full names (signature-only RSA names too)
    // exactly, the short names of plain types in any case. ssh-keyscan
    // then refuses every type it has no KT_ bit for (certificates, XMSS).
    static constexpr std::pair<std::string_view, keyscan_type> full[] = {
        {"ssh-dss", kt_dsa},
        {"ssh-rsa", kt_rsa},
        {"rsa-sha2-256", kt_rsa},
        {"rsa-sha2-512", kt_rsa},
        {"ecdsa-sha2-nistp256", kt_ecdsa},
        {"ecdsa-sha2-nistp384", kt_ecdsa},
        {"ecdsa-sha2-nistp521", kt_ecdsa},
        {"ssh-ed25519", kt_ed25519},
        {"sk-ecdsa-sha2-nistp256@openssh.com", kt_ecdsa_sk},
        {"webauthn-sk-ecdsa-sha2-nistp256@openssh.com", kt_ecdsa_sk},
        {"sk-ssh-ed25519@openssh.com", kt_ed25519_sk},
    };
    static constexpr std::pair<std::string_view, keyscan_type> short_names[] = {
        {"dsa", kt_dsa}, {"rsa", kt_rsa}, {"ecdsa", kt_ecdsa}, {"ed25519", kt_ed25519},
        {"ecdsa-sk", kt_ecdsa_sk}, {"ed25519-sk", kt_ed25519_sk},
    };
    for (const auto& [n, t] : full)
        if (n == name)
            return t;
    for (const auto& [n, t] : short_names)
        if (n.size() == name.size() && ::strncasecmp(n.data(), name.data(), n.size()) == 0)
            return t;
    return std::nullopt;
}

std::string keyscan_usage_text()
{
    return "usage: ssh-keyscan [-46cDHv] [-f file] [-p port] [-T timeout] [-t type]\n"
           "\t\t   [host | addrlist namelist]\n";
}

namespace {

keyscan_parse_result refuse(std::string message, int status = 1)
{
    return {std::nullopt, {std::move(message), status}};
}

keyscan_parse_result usage(std::string before = {}) { return refuse(before + keyscan_usage_text()); }

// The value of -t: strtok() semantics (empty names skipped); the first
// name that is no known type is fatal.
keyscan_parse_result parse_types(std::string_view list, unsigned& types)
{
    types = 0;
    std::size_t pos = 0;
    while (pos <= list.size()) {
        std::size_t comma = list.find(',', pos);
        if (comma == std::string_view::npos)
            comma = list.size();
        std::string_view name = list.substr(pos, comma - pos);
        pos = comma + 1;
        if (name.empty())
            continue;
        auto t = keyscan_type_from_name(name);
        if (!t)
            return refuse("Unknown key type \"" + std::string(name) + "\"\r\n", 255);
        types |= *t;
    }
    return {};
}

} // namespace

keyscan_parse_result parse_keyscan_args(const std::vector<std::string>& args)
{
    keyscan_options o;
    // The first complaint ends the scan.
    std::optional<keyscan_parse_result> failed;
    auto fail = [&](keyscan_parse_result r) {
        failed = std::move(r);
        return false;
    };
    auto option = [&](char c, const std::string& value) {
        switch (c) {
        case 'H': o.hash = true; break;
        case 'c': o.certificates = true; break;
        case 'D': o.sshfp = true; break;
        case 'v': o.verbose = true; break;
        case '4': o.family = AF_INET; break;
        case '6': o.family = AF_INET6; break;
        case 'p':
            o.port = parse_port(value);
            if (o.port <= 0)
                return fail(refuse("Bad port '" + value + "'\n"));
            break;
        case 'T': {
            auto t = parse_time_interval(value);
            if (!t || *t == 0)
                return fail(usage("Bad timeout '" + value + "'\n"));
            o.timeout_s = static_cast<int>(*t);
            break;
        }
        case 't':
            if (auto r = parse_types(value, o.types); !r.error.message.empty())
                return fail(std::move(r));
            break;
        case 'f': o.files.push_back(value == "-" ? std::string() : value); break;
        case 'O':
            // OpenSSH 9.3's -O hashalg= (9.2 has no -O): which SSHFP
            // digests -D prints.
            if (value.rfind("hashalg=", 0) != 0)
                return fail(refuse("Unsupported -O option\r\n", 255));
            if (value == "hashalg=sha1")
                o.sshfp_digest = 1;
            else if (value == "hashalg=sha256")
                o.sshfp_digest = 2;
            else
                return fail(refuse("Unsupported hash algorithm\r\n", 255));
            break;
        }
        return true;
    };
    const auto scan = scan_short_options(args, 0, "cDHv46O:p:T:t:f:", option);
    if (failed)
        return std::move(*failed);
    if (!scan.ok())
        return usage(scan.error + "\r\n");
    o.hosts.assign(args.begin() + static_cast<std::ptrdiff_t>(scan.next), args.end());
    if (o.hosts.empty() && o.files.empty())
        return usage();
    return {std::move(o), {}};
}

std::optional<std::string> clean_keyscan_line(std::string_view line)
{
    if (auto hash = line.find('#'); hash != std::string_view::npos)
        line = line.substr(0, hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\n'))
        line.remove_suffix(1);
    if (line.empty())
        return std::nullopt;
    return std::string(line);
}

std::optional<keyscan_target> split_keyscan_entry(std::string_view entry)
{
    // strnnsep(" \t\n"): the first non-empty token; the names are what
    // follows the one separator after it, verbatim.
    static constexpr std::string_view seps = " \t\n";
    std::size_t start = entry.find_first_not_of(seps);
    if (start == std::string_view::npos)
        return std::nullopt;
    std::size_t end = entry.find_first_of(seps, start);
    keyscan_target t;
    t.connect_names = std::string(entry.substr(start, end == std::string_view::npos ? entry.npos : end - start));
    if (end != std::string_view::npos && end + 1 < entry.size())
        t.output_names = std::string(entry.substr(end + 1));
    else
        t.output_names = t.connect_names;
    return t;
}

std::optional<cidr_range> cidr_range::parse(std::string_view entry)
{
    std::string text(entry);
    std::optional<unsigned> masklen;
    if (auto slash = text.find('/'); slash != std::string::npos) {
        const std::string len = text.substr(slash + 1);
        if (len.empty() || len.size() > 3 || len.find_first_not_of("0123456789") != std::string::npos)
            return std::nullopt;
        masklen = static_cast<unsigned>(std::stoul(len));
        text.resize(slash);
    }
    cidr_range r;
    std::size_t size = 0;
    if (::inet_pton(AF_INET, text.c_str(), r.cur_.data()) == 1) {
        r.family_ = AF_INET;
        size = 4;
    } else if (::inet_pton(AF_INET6, text.c_str(), r.cur_.data()) == 1) {
        r.family_ = AF_INET6;
        size = 16;
    } else {
        return std::nullopt;
    }
    const unsigned bits = masklen.value_or(static_cast<unsigned>(size * 8));
    if (bits > size * 8)
        return std::nullopt;
    // Host bits must be zero (addr_host_is_all0s); the end has them all set.
    r.end_ = r.cur_;
    for (std::size_t i = 0; i < size; ++i) {
        const unsigned first_bit = static_cast<unsigned>(i * 8);
        std::uint8_t host_mask = 0;
        if (bits <= first_bit)
            host_mask = 0xff;
        else if (bits < first_bit + 8)
            host_mask = static_cast<std::uint8_t>(0xff >> (bits - first_bit));
        if ((r.cur_[i] & host_mask) != 0)
            return std::nullopt;
        r.end_[i] = static_cast<std::uint8_t>(r.cur_[i] | host_mask);
    }
    return r;
}

std::optional<std::string> cidr_range::next()
{
    if (done_)
        return std::nullopt;
    char buf[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(family_, cur_.data(), buf, sizeof buf);
    const std::size_t size = family_ == AF_INET ? 4 : 16;
    if (std::memcmp(cur_.data(), end_.data(), size) == 0) {
        done_ = true;
    } else {
        for (std::size_t i = size; i-- > 0;)
            if (++cur_[i] != 0)
                break;
    }
    return std::string(buf);
}

} // namespace longhaul
