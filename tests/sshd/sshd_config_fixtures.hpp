// Helpers of the sshd_config tests (sshd_config_test.cpp and
// sshd_config_output_test.cpp): parsing a text, the error it gives, a
// connection to match against, and `sshd -T` compared with OpenSSH's.
#pragma once

#include "sshd/sshd_config.hpp"

#include "sshd/sshd_algorithms.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include "tests/openssh_kex_default.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <sstream>
#include <string>

namespace longhaul {

using longhaul::test::temp_dir;
using longhaul::test::write_file;

namespace {

inline config_load_options no_dns()
{
    config_load_options o;
    o.resolve_addresses = true; // the tests only use numeric addresses and no name
    return o;
}

inline sshd_config parse(const std::string& text, config_load_options o = no_dns())
{
    return sshd_config::parse(text, "test.cfg", o);
}

inline std::string error_of(const std::string& text, config_load_options o = no_dns())
{
    try {
        (void)sshd_config::parse(text, "test.cfg", o);
    } catch (const config_error& e) {
        return e.what();
    }
    return "(no error)";
}

inline connection_info conn(std::string user, std::string address = "192.0.2.10", int lport = 22)
{
    connection_info ci;
    ci.user = user;
    ci.address = address;
    ci.host = address;
    ci.local_address = "198.51.100.1";
    ci.local_port = lport;
    ci.groups = {user + "grp"};
    return ci;
}

// `sshd -T` output of OpenSSH with the algorithm lists narrowed to what this
// build implements (dump() prints the lists the server really offers).
inline std::string normalise_openssh_dump(const std::string& text)
{
    std::istringstream in(longhaul::test::strip_cr(text));
    std::string line, out;
    while (std::getline(in, line)) {
        const auto sp = line.find(' ');
        const std::string key = line.substr(0, sp);
        std::optional<sshd_algorithm_list> kind;
        if (key == "ciphers")
            kind = sshd_algorithm_list::cipher;
        else if (key == "macs")
            kind = sshd_algorithm_list::mac;
        else if (key == "kexalgorithms")
            kind = sshd_algorithm_list::kex;
        else if (key == "hostkeyalgorithms" || key == "pubkeyacceptedalgorithms")
            kind = sshd_algorithm_list::key;
        if (kind && sp != std::string::npos) {
            std::string value = line.substr(sp + 1);
            if (*kind == sshd_algorithm_list::kex)
                value = longhaul::test::with_openssh99_kex_default(value);
            // User certificates are accepted: their algorithms stay. So do
            // the host certificate ones in sshd -T's hostkeyalgorithms.
            if (key == "pubkeyacceptedalgorithms")
                value = sshd_supported_pubkey_algorithms(value);
            else if (key == "hostkeyalgorithms")
                value = sshd_shown_host_key_algorithms(value);
            else
                value = sshd_supported_only(*kind, value);
            line = key + " " + value;
        }
        out += line + "\n";
    }
    return out;
}

// Longhaul's own keywords come last in dump(); OpenSSH has none of them.
inline std::string without_longhaul_keywords(const std::string& text)
{
    const std::string tail = "channelwindowmax ";
    const auto at = text.find("\n" + tail);
    REQUIRE(at != std::string::npos);
    CHECK(text.substr(at + 1).find("\nconnectionwindowmax ") != std::string::npos);
    return text.substr(0, at + 1);
}

// Compares dump() with OpenSSH's `sshd -T -f file [-C spec]`.
inline void check_against_openssh(const std::string& config_text, const std::string& spec)
{
    temp_dir dir;
    const std::string cfg = dir.file("sshd_config");
    write_file(cfg, config_text);
    std::string cmd = "/usr/sbin/sshd -T -f " + cfg;
    if (!spec.empty())
        cmd += " -C " + spec;
    const auto real = longhaul::test::run_command(cmd + " 2>&1");
    config_load_options o;
    o.path = cfg;
    std::string ours;
    int status = 0;
    try {
        auto c = sshd_config::load(o);
        connection_info ci;
        ci.test = true;
        if (!spec.empty()) {
            std::string err;
            auto parsed = parse_connection_spec(spec, err);
            REQUIRE(parsed);
            ci = *parsed;
        }
        ours = without_longhaul_keywords(dump(c.for_connection(ci)));
    } catch (const config_error& e) {
        ours = std::string(e.what()) + "\n";
        status = e.exit_status();
    }
    INFO("config:\n" << config_text << "spec: " << spec);
    CHECK(real.status == status);
    CHECK(normalise_openssh_dump(real.output) == ours);
}

inline bool have_sshd() { return longhaul::test::have_program("/usr/sbin/sshd"); }

} // namespace

} // namespace longhaul
