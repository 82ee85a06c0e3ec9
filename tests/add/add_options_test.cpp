#include "ssh/add/add_options.hpp"

#include "ssh/add/add_commands.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::add;

namespace {

add_options ok(std::vector<std::string> args)
{
    auto p = parse_add_args(args);
    INFO(p.error.message);
    REQUIRE(p.options.has_value());
    return *p.options;
}

add_exit bad(std::vector<std::string> args)
{
    auto p = parse_add_args(args);
    REQUIRE(!p.options.has_value());
    return p.error;
}

} // namespace

TEST_CASE("ssh-add options: actions")
{
    CHECK(ok({}).what == action::add);
    CHECK(ok({}).files.empty());
    CHECK(ok({"-l"}).what == action::list_fingerprints);
    CHECK(ok({"-L"}).what == action::list_public);
    CHECK(ok({"-D"}).what == action::remove_all);
    CHECK(ok({"-d", "k"}).what == action::remove);
    CHECK(ok({"-x"}).what == action::lock);
    CHECK(ok({"-X"}).what == action::unlock);
    CHECK(ok({"-T", "k.pub"}).what == action::test);
    CHECK(ok({"-s", "lib.so"}).what == action::add_pkcs11);
    CHECK(ok({"-e", "lib.so"}).what == action::remove_pkcs11);
    // -l wins over -d and -T, as OpenSSH tests the list flags first.
    CHECK(ok({"-d", "-l"}).what == action::list_fingerprints);
    CHECK(ok({"-T", "-D"}).what == action::remove_all);
}

TEST_CASE("ssh-add options: flags and arguments")
{
    auto o = ok({"-cqk", "-t", "1h30m", "-E", "md5", "a", "b"});
    CHECK(o.confirm);
    CHECK(o.quiet);
    CHECK(o.key_only);
    REQUIRE(o.lifetime.has_value());
    CHECK(*o.lifetime == 5400);
    CHECK(o.hash == fingerprint_hash::md5);
    CHECK(o.files == std::vector<std::string>{"a", "b"});

    CHECK(*ok({"-t90"}).lifetime == 90);
    CHECK(ok({"-Esha256", "-l"}).hash == fingerprint_hash::sha256);
    CHECK(ok({"-E", "SHA256"}).hash == fingerprint_hash::sha256);
    CHECK(ok({"-vvv"}).verbose == 3);
    // BSD getopt: the first operand ends the options; "--" too.
    CHECK(ok({"file", "-l"}).files == std::vector<std::string>{"file", "-l"});
    CHECK(ok({"--", "-l"}).files == std::vector<std::string>{"-l"});
    CHECK(ok({"-"}).files == std::vector<std::string>{"-"});
    CHECK(ok({"-h", "host", "-H", "kh", "-S", "p"}).destinations == std::vector<std::string>{"host"});
    CHECK(*ok({"-M", "7"}).maxsign == 7);
}

TEST_CASE("ssh-add options: errors as OpenSSH reports them")
{
    auto u = bad({"-Z"});
    CHECK(u.status == 1);
    CHECK(u.message == std::string("unknown option -- Z\r\n") + usage_text);
    auto m = bad({"-E"});
    CHECK(m.status == 1);
    CHECK(m.message == std::string("option requires an argument -- E\r\n") + usage_text);
    auto h = bad({"-E", "foo"});
    CHECK(h.status == 255);
    CHECK(h.message == "Invalid hash algorithm \"foo\"\r\n");
    auto t = bad({"-t", "bogus"});
    CHECK(t.status == 1);
    CHECK(t.message == "Invalid lifetime\n");
    CHECK(bad({"-t", "1x"}).message == "Invalid lifetime\n");
    // The flag that came first is named.
    CHECK(bad({"-l", "-L"}).message == "-l flag already specified\r\n");
    CHECK(bad({"-X", "-x"}).message == "-X flag already specified\r\n");
    auto c = bad({"-x", "-l"});
    CHECK(c.status == 255);
    CHECK(c.message == "Invalid combination of actions\r\n");
    CHECK(bad({"-D", "-X"}).message == "Invalid combination of actions\r\n");
    auto n = bad({"-T"});
    CHECK(n.status == 255);
    CHECK(n.message == "no keys to test\r\n");
    CHECK(bad({"-M", "x"}).status == 255);
}

TEST_CASE("ssh-add options: lifetimes")
{
    CHECK(parse_lifetime("0") == 0u);
    CHECK(parse_lifetime("10") == 10u);
    CHECK(parse_lifetime("1w") == 604800u);
    CHECK(parse_lifetime("2m3s") == 123u);
    CHECK(!parse_lifetime(""));
    CHECK(!parse_lifetime("-5"));
    CHECK(!parse_lifetime("5q"));
    CHECK(!parse_lifetime("99999999999"));
}

TEST_CASE("ssh-add options: what is not supported yet is refused, never ignored")
{
    CHECK(!unsupported_option(ok({})).has_value());
    CHECK(!unsupported_option(ok({"-c", "-t", "5", "k"})).has_value());
    CHECK(!unsupported_option(ok({"-l"})).has_value());
    CHECK(!unsupported_option(ok({"-h", "host", "-H", "kh", "k"})).has_value());
    // -S names the provider of FIDO keys (unused, silently, for others).
    CHECK(!unsupported_option(ok({"-S", "prov"})).has_value());
    CHECK(!unsupported_option(ok({"-S", "prov", "-c", "-t", "60", "k"})).has_value());
    CHECK(!unsupported_option(ok({"-S", "prov", "-d", "k"})).has_value());
    // PKCS#11 modules (-s with its constraints, -e).
    CHECK(!unsupported_option(ok({"-s", "lib"})).has_value());
    CHECK(!unsupported_option(ok({"-c", "-t", "60", "-s", "lib"})).has_value());
    CHECK(!unsupported_option(ok({"-e", "lib"})).has_value());
    // -K (resident keys), -d beside it ignored as OpenSSH ignores it.
    CHECK(!unsupported_option(ok({"-K"})).has_value());
    CHECK(ok({"-K"}).what == action::load_resident);
    CHECK(ok({"-K", "-d", "-S", "prov"}).what == action::load_resident);
    CHECK(ok({"-l", "-K"}).what == action::list_fingerprints);
    CHECK(ok({"-K", "-s", "lib"}).what == action::add_pkcs11);
    for (auto args : std::vector<std::vector<std::string>>{{"-M", "3"}, {"-m", "3"}, {"-K", "-M", "3"}}) {
        CAPTURE(args.front());
        auto why = unsupported_option(ok(args));
        REQUIRE(why.has_value());
        CHECK(why->find("not supported yet") != std::string::npos);
    }
}

TEST_CASE("ssh-add options: the security key provider: -S, else $SSH_SK_PROVIDER verbatim, else internal")
{
    CHECK(ok({"-S", "/p/x.so", "k"}).sk_provider == std::optional<std::string>("/p/x.so"));
    CHECK(security_key_provider(ok({"k"}), nullptr) == "internal");
    CHECK(security_key_provider(ok({"k"}), "/env/prov.so") == "/env/prov.so");
    // Set but empty: sent empty (the agent then refuses it).
    CHECK(security_key_provider(ok({"k"}), "") == "");
    // -S wins over the environment; relative paths are not resolved.
    CHECK(security_key_provider(ok({"-S", "test.so", "k"}), "/env/prov.so") == "test.so");
    CHECK(security_key_provider(ok({"-S", "regress/p.so", "k"}), nullptr) == "regress/p.so");
    CHECK(security_key_provider(ok({"-S", "", "k"}), "/env/prov.so") == "");
    // The last -S counts (OpenSSH's optarg overwrites).
    CHECK(security_key_provider(ok({"-S", "a", "-S", "b", "k"}), nullptr) == "b");
}

TEST_CASE("ssh-add options: constraints: the provider only for security keys, with -t and -c")
{
    const std::vector<agent::destination_constraint> none;
    // A plain key: nothing at all (ADD_IDENTITY), -S or not.
    CHECK(add_constraints(ok({"k"}), none, false, nullptr).empty());
    CHECK(add_constraints(ok({"-S", "prov", "k"}), none, false, "/env.so").empty());
    // A security key: always a provider.
    auto sk = add_constraints(ok({"k"}), none, true, nullptr);
    CHECK(sk.sk_provider == std::optional<std::string>("internal"));
    CHECK(!sk.lifetime_seconds);
    CHECK(!sk.confirm);
    CHECK(add_constraints(ok({"k"}), none, true, "").sk_provider == std::optional<std::string>(""));
    auto all = add_constraints(ok({"-t", "60", "-c", "-S", "/p.so", "k"}), none, true, "/env.so");
    CHECK(all.lifetime_seconds == std::optional<std::uint32_t>(60));
    CHECK(all.confirm);
    CHECK(all.sk_provider == std::optional<std::string>("/p.so"));
    // -t 0 is no lifetime, as for other keys.
    CHECK(!add_constraints(ok({"-t", "0", "k"}), none, true, nullptr).lifetime_seconds);
    auto plain = add_constraints(ok({"-t", "60", "-c", "-S", "/p.so", "k"}), none, false, nullptr);
    CHECK(plain.lifetime_seconds == std::optional<std::uint32_t>(60));
    CHECK(plain.confirm);
    CHECK(!plain.sk_provider);
}
