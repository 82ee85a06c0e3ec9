// HostCertificate loading: each certificate matched to a loaded host key,
// the others logged with OpenSSH's messages and skipped.
#include "sshd/host_certificates.hpp"

#include "common/keys/key_file.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace longhaul;

namespace {

const std::string cert_dir = std::string(LONGHAUL_TEST_DATA) + "/certs/";

std::string slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::shared_ptr<const private_key> load_key(const std::string& name)
{
    auto k = parse_private_key(slurp(cert_dir + name), std::nullopt);
    REQUIRE(k.has_value());
    return std::make_shared<const private_key>(std::move(*k));
}

} // namespace

TEST_CASE("host certificates: matched to their keys, the rest logged and skipped")
{
    const std::vector<std::shared_ptr<const private_key>> keys = {load_key("user_rsa"), load_key("host_ed25519")};
    std::vector<std::pair<log_level, std::string>> log;
    const auto loaded = load_host_certificates(
        {cert_dir + "host_ed25519-cert.pub", cert_dir + "user_ed25519-cert.pub", cert_dir + "host_ed25519.pub",
         cert_dir + "missing-cert.pub"},
        keys, [&](log_level l, std::string_view m) { log.emplace_back(l, std::string(m)); });
    REQUIRE(loaded.size() == 1);
    CHECK(loaded[0].key() == keys[1]->public_part());
    CHECK(loaded[0].key_id() == "host cert");
    REQUIRE(log.size() == 4);
    CHECK(log[0] == std::pair{log_level::debug1, std::string("host certificate: #1 type 7 ED25519-CERT")});
    CHECK(log[1] == std::pair{log_level::error, "No matching private key for certificate: " + cert_dir +
                                                    "user_ed25519-cert.pub"});
    CHECK(log[2] ==
          std::pair{log_level::error, "Certificate file is not a certificate: " + cert_dir + "host_ed25519.pub"});
    CHECK(log[3] == std::pair{log_level::error, "Could not load host certificate \"" + cert_dir +
                                                    "missing-cert.pub\": No such file or directory"});
    // As sshkey_load_public: "NAME.pub" when NAME is missing or holds no
    // key, and "No such file or directory" when neither does.
    log.clear();
    CHECK(load_host_certificates({cert_dir + "host_ed25519-cert"}, keys, {}).size() == 1);
    CHECK(load_host_certificates({cert_dir + "host_ed25519-cert.L"}, keys, [&](log_level l, std::string_view m) {
              log.emplace_back(l, std::string(m));
          }).empty());
    REQUIRE(log.size() == 1);
    CHECK(log[0].second == "Could not load host certificate \"" + cert_dir +
                               "host_ed25519-cert.L\": No such file or directory");
    // The same certificate twice: kept once.
    CHECK(load_host_certificates({cert_dir + "host_ed25519-cert.pub", cert_dir + "host_ed25519-cert.pub"}, keys, {}).size() ==
          1);
}

TEST_CASE("host certificates: a HostKeyAgent key (public half only) gets its certificate")
{
    const std::vector<std::shared_ptr<const private_key>> keys = {load_key("user_rsa")};
    const std::vector<public_key> agent_keys = {load_key("user_ed25519")->public_part(),
                                                load_key("host_ed25519")->public_part()};
    std::vector<std::pair<log_level, std::string>> log;
    const auto loaded = load_host_certificates(
        {cert_dir + "host_ed25519-cert.pub"}, keys,
        [&](log_level l, std::string_view m) { log.emplace_back(l, std::string(m)); }, agent_keys);
    REQUIRE(loaded.size() == 1);
    CHECK(loaded[0].key() == agent_keys[1]);
    // Numbered after the private keys.
    REQUIRE(log.size() == 1);
    CHECK(log[0] == std::pair{log_level::debug1, std::string("host certificate: #2 type 7 ED25519-CERT")});
}

TEST_CASE("host certificates: the text form")
{
    CHECK(parse_certificate_text("# comment\n\n" + slurp(cert_dir + "host_ed25519-cert.pub")).has_value());
    CHECK(parse_certificate_text(slurp(cert_dir + "host_ed25519.pub")).error() == errc::unsupported);
    CHECK(parse_certificate_text("").error() == errc::invalid_format);
    CHECK(parse_certificate_text("ssh-ed25519-cert-v01@openssh.com !!!!\n").error() == errc::invalid_format);
    // The type named must be the blob's.
    std::string text = slurp(cert_dir + "host_ed25519-cert.pub");
    text.replace(0, text.find(' '), "ecdsa-sha2-nistp256-cert-v01@openssh.com");
    CHECK(parse_certificate_text(text).error() == errc::invalid_format);
}
