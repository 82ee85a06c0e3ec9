#include "ssh/keyscan/keyscan_format.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "ssh/keygen/keygen_formats.hpp"

#include <cctype>

namespace longhaul {

namespace {

std::string lowercase(std::string s)
{
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// OpenSSH's put_host_port(): "[host]:port" unless the port is 22.
std::string host_port(std::string_view host, int port)
{
    if (port == 22)
        return std::string(host);
    std::string s;
    s.reserve(host.size() + 8);
    s.append("[").append(host).append("]:").append(std::to_string(port));
    return s;
}

// ssh-keygen -r's lines, less the digest types -O hashalg= leaves out.
std::string sshfp_lines(const public_key& key, const std::string& host, int digest)
{
    const std::string all = sshfp_records(key, host, false);
    if (digest == 0)
        return all;
    std::string want(" ");
    want.append(std::to_string(digest)).append(" ");
    std::string out;
    std::size_t pos = 0;
    while (pos < all.size()) {
        std::size_t nl = all.find('\n', pos);
        if (nl == std::string::npos)
            nl = all.size() - 1;
        const std::string line = all.substr(pos, nl + 1 - pos);
        // "host IN SSHFP alg digest hex": the digest type is the 5th field.
        std::size_t f = line.find(" IN SSHFP ");
        if (f != std::string::npos) {
            std::size_t alg_end = line.find(' ', f + 10);
            if (alg_end != std::string::npos && line.compare(alg_end, want.size(), want) == 0)
                out += line;
        }
        pos = nl + 1;
    }
    return out;
}

std::string print_one(std::string_view host, const public_key& key, const certificate* cert, const keyscan_format& f,
                      random_source& rng)
{
    // export_dns_rr() has no SSHFP number for a certificate: nothing.
    if (f.sshfp)
        return cert ? std::string() : sshfp_lines(key, std::string(host), f.sshfp_digest);
    std::string line;
    if (!f.certificates) {
        const std::string hp = lowercase(host_port(host, f.port));
        line = (f.hash ? hash_known_host(hp, rng) : hp) + " ";
    }
    if (cert)
        line += std::string(cert->type_name()) + " " + base64_encode(cert->blob());
    else
        line += std::string(key.type_name()) + " " + base64_encode(key.blob());
    return line + "\n";
}

} // namespace

std::string format_keyscan_key(std::string_view output_names, const public_key& key, const certificate* cert,
                               const keyscan_format& f, random_source& rng)
{
    if (f.certificates || (!f.hash && f.port == 22))
        return print_one(output_names, key, cert, f, rng);
    std::string out;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t comma = output_names.find(',', pos);
        out += print_one(output_names.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos),
                         key, cert, f, rng);
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    return out;
}

std::string format_keyscan_banner(std::string_view connect_name, int port, std::string_view version_line, bool sshfp)
{
    std::string s(1, sshfp ? ';' : '#');
    s += " ";
    s += connect_name;
    s += ':';
    s += std::to_string(port);
    s += ' ';
    s += version_line;
    return s + "\n";
}

} // namespace longhaul
