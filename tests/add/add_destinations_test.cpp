#include "ssh/add/add_destinations.hpp"

#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "ssh/add/add_fatal.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::add;

namespace {

struct known_hosts_file {
    known_hosts_file()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "lh-add-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        dir = tmpl;
        path = dir + "/known_hosts";
    }
    ~known_hosts_file()
    {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    void write(const std::string& text) { std::ofstream(path) << text; }
    std::string dir, path;
};

public_key fresh(key_type t)
{
    auto k = private_key::generate(t);
    REQUIRE(k.has_value());
    return k->public_part();
}

} // namespace

TEST_CASE("ssh-add -h: hops from known_hosts")
{
    known_hosts_file f;
    const public_key a = fresh(key_type::ed25519), ca = fresh(key_type::ed25519), b = fresh(key_type::ecdsa_p256),
                     gone = fresh(key_type::ed25519);
    f.write("hosta " + format_public_key(a) + "\n" + "@cert-authority hosta " + format_public_key(ca) + "\n" +
            "@revoked hosta " + format_public_key(gone) + "\n" + "[hostb]:2222 " + format_public_key(b) + "\n");

    auto one = resolve_destinations({"alice@hosta"}, {f.path}, "/nonexistent");
    REQUIRE(one.size() == 1);
    CHECK(one[0].from.hostname.empty());
    CHECK(one[0].from.keys.empty());
    CHECK(one[0].to.user == "alice");
    CHECK(one[0].to.hostname == "hosta");
    REQUIRE(one[0].to.keys.size() == 2); // the @revoked key left out
    CHECK(one[0].to.keys[0].blob == a.blob());
    CHECK(!one[0].to.keys[0].is_ca);
    CHECK(one[0].to.keys[1].blob == ca.blob());
    CHECK(one[0].to.keys[1].is_ca);

    auto hop = resolve_destinations({"hosta>[hostb]:2222", "bob@"}, {f.path}, "/nonexistent");
    REQUIRE(hop.size() == 2);
    CHECK(hop[0].from.hostname == "hosta");
    CHECK(hop[0].to.hostname == "[hostb]:2222");
    REQUIRE(hop[0].to.keys.size() == 1);
    CHECK(hop[0].to.keys[0].blob == b.blob());
    CHECK(hop[1].to.user == "bob");
    CHECK(hop[1].to.hostname.empty());

    // "~/" is the home directory.
    CHECK(resolve_destinations({"hosta"}, {"~/known_hosts"}, f.dir)[0].to.keys.size() == 2);

    auto fatal_message = [&](const std::string& spec) {
        try {
            resolve_destinations({spec}, {f.path}, "/nonexistent");
        } catch (const add_fatal& e) {
            CHECK(e.status() == 255);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(fatal_message("nohost") == "No host keys found for destination \"nohost\"");
    // OpenSSH 9.2 drops only the closing bracket of "[host]".
    CHECK(fatal_message("[hosta]") == "No host keys found for destination \"[hosta\"");
    CHECK(fatal_message("[]") == "No host keys found for destination \"[\"");
    CHECK(fatal_message("") == "Invalid key destination constraint \"\": does not specify user or host");
    CHECK(fatal_message("u@hosta>hosta") == "Invalid key constraint u@hosta: cannot specify user on 'from' host");
}

TEST_CASE("ssh-add -h: the default known_hosts files")
{
    CHECK(default_hostkey_files("/h") == std::vector<std::string>{"/h/.ssh/known_hosts", "/h/.ssh/known_hosts2",
                                                                 "/etc/ssh/ssh_known_hosts",
                                                                 "/etc/ssh/ssh_known_hosts2"});
}
