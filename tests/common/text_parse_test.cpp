#include "common/text_parse.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <string>

using namespace longhaul;

TEST_CASE("text_parse: iequals")
{
    CHECK(iequals("none", "NONE"));
    CHECK(iequals("KexAlgorithms", "kexalgorithms"));
    CHECK(iequals("", ""));
    CHECK_FALSE(iequals("none", "non"));
    CHECK_FALSE(iequals("no-pty", "no_pty"));
    // Bytes outside ASCII compare as they are.
    CHECK(iequals("\xc3\xa9", "\xc3\xa9"));
    CHECK_FALSE(iequals("\xc3\xa9", "\xc3\x89"));
}

TEST_CASE("text_parse: lowercase")
{
    CHECK(lowercase("Web1.Example.ORG") == "web1.example.org");
    CHECK(lowercase("[HOST]:2222") == "[host]:2222");
    CHECK(lowercase("") == "");
}

namespace {

// The value, or the strerror text of the failure.
std::string scaled(std::string_view s)
{
    const char* why = nullptr;
    auto v = scan_scaled(s, why);
    return v ? std::to_string(*v) : std::string(why);
}

} // namespace

// Every expected value here is what OpenSSH 9.2's ssh -G and sshd -T print
// for RekeyLimit with that text.
TEST_CASE("text_parse: scan_scaled")
{
    CHECK(scaled("1G") == "1073741824");
    CHECK(scaled("512K") == "524288");
    CHECK(scaled("100") == "100");
    CHECK(scaled("100b") == "100");
    CHECK(scaled("1k") == "1024");
    CHECK(scaled("2g") == "2147483648");
    CHECK(scaled("1T") == "1099511627776");
    CHECK(scaled("7E") == "8070450532247928832");
    CHECK(scaled("1.5G") == "1610612736");
    CHECK(scaled("0.5K") == "512");
    CHECK(scaled(".5G") == "536870912");
    CHECK(scaled("1.25M") == "1310720");
    CHECK(scaled("1.123456789G") == "1206302541");
    CHECK(scaled("1.123456789123456789M") == "1178029");
    CHECK(scaled("1.99999999999999999K") == "2047");
    CHECK(scaled("1.0000000000000000001K") == "1024");
    CHECK(scaled("9223372036854775807") == "9223372036854775807");
    CHECK(scaled("00000000000000000016") == "16");
    CHECK(scaled(" 16") == "16");
    CHECK(scaled("+16") == "16");
    CHECK(scaled("-16") == "-16");
    CHECK(scaled("-0") == "0");
    // Without a unit the fraction is dropped.
    CHECK(scaled("100.7") == "100");
    CHECK(scaled("16.9") == "16");
    CHECK(scaled("1.5B") == "1");
    // The fraction is cut until fraction * unit fits in a long long.
    CHECK(scaled("1.25E") == "1383505805528216371");
    CHECK(scaled("1.5E") == "1729382256910270464");
    CHECK(scaled("7.99E") == "8070450532247928832");
    CHECK(scaled("0.1234567890123456789E") == "115292150460684697");
    // No digits is zero; punctuation may follow the unit.
    CHECK(scaled("M") == "0");
    CHECK(scaled("K") == "0");
    CHECK(scaled(".") == "0");
    CHECK(scaled("1K!") == "1024");
    CHECK(scaled("1K.") == "1024");
    CHECK(scaled("1K-") == "1024");

    CHECK(scaled("+-16") == "Invalid argument");
    CHECK(scaled("--16") == "Invalid argument");
    CHECK(scaled("1.2.3") == "Invalid argument");
    CHECK(scaled("1KB") == "Invalid argument");
    CHECK(scaled("17x") == "Invalid argument");
    CHECK(scaled("1e3") == "Invalid argument");
    CHECK(scaled("0x20") == "Invalid argument");
    CHECK(scaled("8E") == "Numerical result out of range");
    CHECK(scaled("9223372036854775808") == "Numerical result out of range");
    CHECK(scaled("92233720368547758070") == "Numerical result out of range");
    CHECK(scaled("000000000000000000016") == "Numerical result out of range");
    CHECK(scaled("1.99999999999999999999K") == "Numerical result out of range");
    CHECK(scaled("0.9999999999999999999E") == "Numerical result out of range");
}

TEST_CASE("text_parse: hpdelim2 and hpdelim")
{
    auto f = hpdelim2("host:22");
    REQUIRE(f);
    CHECK(f->field == "host");
    CHECK(f->delim == ':');
    CHECK(f->more);
    CHECK(f->rest == "22");

    f = hpdelim2("[::1]:2222/path");
    REQUIRE(f);
    CHECK(f->field == "[::1]");
    CHECK(f->rest == "2222/path");

    f = hpdelim2("host/22");
    REQUIRE(f);
    CHECK(f->delim == '/');
    CHECK(f->rest == "22");

    f = hpdelim2("host");
    REQUIRE(f);
    CHECK(f->field == "host");
    CHECK_FALSE(f->more);
    CHECK(f->rest.empty());
    CHECK(f->delim == 0);

    f = hpdelim2("host:");
    REQUIRE(f);
    CHECK(f->more);
    CHECK(f->rest.empty());

    f = hpdelim2("");
    REQUIRE(f);
    CHECK(f->field.empty());
    CHECK_FALSE(f->more);

    CHECK_FALSE(hpdelim2("[::1"));
    CHECK_FALSE(hpdelim2("[::1]x"));

    // hpdelim: ':' only. sshd -T of OpenSSH 9.2 refuses PermitOpen host/22
    // and [::1]/22 ("missing host") and takes host:22 and [::1]:22.
    CHECK(hpdelim("host:22"));
    CHECK(hpdelim("[::1]:22"));
    CHECK(hpdelim("host"));
    CHECK_FALSE(hpdelim("host/22"));
    CHECK_FALSE(hpdelim("[::1]/22"));
    CHECK_FALSE(hpdelim("[::1]x"));
    CHECK_FALSE(hpdelim("[::1"));
}

TEST_CASE("text_parse: clean_hostname")
{
    CHECK(clean_hostname("[::1]") == "::1");
    CHECK(clean_hostname("[1.2.3.4]") == "1.2.3.4");
    CHECK(clean_hostname("[]") == "");
    CHECK(clean_hostname("[") == "[");
    CHECK(clean_hostname("host") == "host");
    CHECK(clean_hostname("[a]b") == "[a]b");
}

TEST_CASE("text_parse: strtonum")
{
    const char* why = nullptr;
    CHECK(strtonum("42", 0, 100, why).value() == 42);
    CHECK(why == nullptr);
    CHECK(strtonum(" +7", 0, 100, why).value() == 7);
    CHECK(strtonum("-0", 0, 100, why).value() == 0);
    CHECK(strtonum("-5", -10, 10, why).value() == -5);
    CHECK(strtonum("9223372036854775807", 0, LLONG_MAX, why).value() == LLONG_MAX);
    CHECK(strtonum("-9223372036854775808", LLONG_MIN, 0, why).value() == LLONG_MIN);
    CHECK_FALSE(strtonum("", 0, 100, why));
    CHECK(std::string(why) == "invalid");
    CHECK_FALSE(strtonum("+", 0, 100, why));
    CHECK(std::string(why) == "invalid");
    CHECK_FALSE(strtonum("5 ", 0, 100, why));
    CHECK(std::string(why) == "invalid");
    CHECK_FALSE(strtonum("0x10", 0, 100, why));
    CHECK(std::string(why) == "invalid");
    CHECK_FALSE(strtonum("99999999999999999999x", 0, 100, why));
    CHECK(std::string(why) == "invalid");
    CHECK_FALSE(strtonum("101", 0, 100, why));
    CHECK(std::string(why) == "too large");
    CHECK_FALSE(strtonum("-1", 0, 100, why));
    CHECK(std::string(why) == "too small");
    CHECK_FALSE(strtonum("9223372036854775808", 0, LLONG_MAX, why));
    CHECK(std::string(why) == "too large");
    CHECK_FALSE(strtonum("-9223372036854775809", LLONG_MIN, 0, why));
    CHECK(std::string(why) == "too small");
    CHECK_FALSE(strtonum("5", 10, 0, why));
    CHECK(std::string(why) == "invalid");
}

TEST_CASE("text_parse: atoi_err")
{
    // ssh -G -o 'ConnectionAttempts ""' of OpenSSH 9.2: "integer value missing."
    int v = -1;
    CHECK(std::string(atoi_err("", v)) == "missing");
    CHECK(atoi_err("5", v) == nullptr);
    CHECK(v == 5);
    CHECK(atoi_err(" +6", v) == nullptr);
    CHECK(v == 6);
    CHECK(std::string(atoi_err("-1", v)) == "too small");
    CHECK(std::string(atoi_err("2147483648", v)) == "too large");
    CHECK(std::string(atoi_err("5x", v)) == "invalid");
    CHECK(v == 6);
}

TEST_CASE("text_parse: parse_port")
{
    CHECK(parse_port("22") == 22);
    CHECK(parse_port("0") == 0);
    CHECK(parse_port(" +22") == 22);
    CHECK(parse_port("65535") == 65535);
    CHECK(parse_port("65536") == -1);
    CHECK(parse_port("-1") == -1);
    CHECK(parse_port("") == -1);
    CHECK(parse_port("2x") == -1);
    CHECK(parse_port("ssh") == 22);
    CHECK(parse_port(std::string_view("ssh\0x", 5)) == -1);
    CHECK(parse_port("no-such-service-name") == -1);
}

TEST_CASE("text_parse: tunnel devices (a2tun)")
{
    CHECK(parse_tunnel_device("3") == 3);
    CHECK(parse_tunnel_device("any") == tun_id_any);
    CHECK(parse_tunnel_device("ANY") == tun_id_any);
    CHECK(parse_tunnel_device("+5") == 5);
    CHECK(parse_tunnel_device("-0") == 0);
    CHECK(parse_tunnel_device("2147483645") == 2147483645);
    CHECK(parse_tunnel_device("2147483646") == tun_id_error);
    CHECK(parse_tunnel_device("-1") == tun_id_error);
    CHECK(parse_tunnel_device("x") == tun_id_error);
    CHECK(parse_tunnel_device("1:2") == tun_id_error);

    int remote = 0;
    CHECK(parse_tunnel_device("3", remote) == 3);
    CHECK(remote == tun_id_any);
    CHECK(parse_tunnel_device("any:7", remote) == tun_id_any);
    CHECK(remote == 7);
    CHECK(parse_tunnel_device("1:x", remote) == tun_id_error);
    CHECK(parse_tunnel_device("x:1", remote) == tun_id_error);
    CHECK(remote == 1);
}

TEST_CASE("text_parse: IPQoS values")
{
    // As ssh -G and sshd -T of OpenSSH 9.2 read and print them.
    CHECK(parse_ipqos("af21") == 0x48);
    CHECK(parse_ipqos("AF21") == 0x48);
    CHECK(parse_ipqos("none") == INT_MAX);
    CHECK(parse_ipqos("cs0") == 0);
    CHECK(parse_ipqos("0x20") == 0x20);
    CHECK(parse_ipqos("040") == 0x20);
    CHECK(parse_ipqos(" +32") == 0x20);
    CHECK(parse_ipqos("-0") == 0);
    CHECK(parse_ipqos("0000000000000000000032") == 0x1a);
    CHECK(parse_ipqos("255") == 255);
    CHECK(parse_ipqos("256") == -1);
    CHECK(parse_ipqos("-1") == -1);
    CHECK(parse_ipqos("") == -1);
    CHECK(parse_ipqos("32x") == -1);
    CHECK(parse_ipqos(std::string_view("32\0x", 4)) == -1);
    CHECK(parse_ipqos("99999999999999999999999") == -1);

    CHECK(ipqos_name(0x48) == "af21");
    CHECK(ipqos_name(0x04) == "le"); // "reliability" has the same value
    CHECK(ipqos_name(0x10) == "lowdelay");
    CHECK(ipqos_name(INT_MAX) == "none");
    CHECK(ipqos_name(0x1a) == "0x1a");
    CHECK(ipqos_name(0x01) == "0x01");
}

TEST_CASE("parse_window_size: auto, sizes, and what is refused")
{
    std::string why;
    CHECK(parse_window_size("auto", 1u << 31, why) == 0u);
    CHECK(parse_window_size("64K", 1u << 31, why) == 65536u);
    CHECK(parse_window_size("256M", 1u << 31, why) == 256u << 20);
    CHECK_FALSE(parse_window_size("1K", 1u << 31, why));
    CHECK(why == "must be \"auto\" or between 64K and 2048M");
    CHECK_FALSE(parse_window_size("3G", 1u << 31, why));
    CHECK_FALSE(parse_window_size("lots", 1u << 31, why));
    CHECK(why == "Invalid argument");
}
