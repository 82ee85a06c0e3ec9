#include "common/keys/fingerprint.hpp"

#include "common/keys/key_lines.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace longhaul;

namespace {

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

} // namespace

TEST_CASE("fingerprint: ssh-keygen -lv output for every hash and key type")
{
    const std::string dir = std::string(LONGHAUL_TEST_DATA) + "/sshd/";
    for (const char* name : {"ed25519", "rsa2048", "ecdsa521"}) {
        auto line = load_public_key_file(dir + name + ".pub");
        REQUIRE(line);
        for (auto h : {fingerprint_hash::sha256, fingerprint_hash::md5, fingerprint_hash::sha1, fingerprint_hash::sha384,
                       fingerprint_hash::sha512}) {
            std::string hash(fingerprint_hash_name(h));
            for (auto& c : hash)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const std::string want = read_file(dir + name + "." + hash + ".lv");
            const std::string got = std::to_string(line->key.bits()) + " " + key_fingerprint(line->key, h) + " " +
                                    line->comment + " (" + std::string(key_type_short_name(line->key.type())) + ")\n" +
                                    key_randomart(line->key, h) + "\n";
            INFO(name << " " << hash);
            CHECK(got == want);
        }
    }
}

TEST_CASE("fingerprint: the walk, its clamping at the walls and the borders")
{
    // An all-zero digest walks diagonally up-left from the centre, along the
    // top wall, and stays in the corner where it ends.
    const bytes zeros(32, 0);
    const std::string art = randomart(zeros, "ED25519", 256, "SHA256");
    CHECK(art == "+--[ED25519 256]--+\n"
                 "|E....            |\n"
                 "|     .           |\n"
                 "|      .          |\n"
                 "|       .         |\n"
                 "|        S        |\n"
                 "|                 |\n"
                 "|                 |\n"
                 "|                 |\n"
                 "|                 |\n"
                 "+----[SHA256]-----+");
    CHECK(parse_fingerprint_hash("sha256") == fingerprint_hash::sha256);
    CHECK(parse_fingerprint_hash("MD5") == fingerprint_hash::md5);
    CHECK_FALSE(parse_fingerprint_hash("sha3"));
    // sshd_config's FingerprintHash reads the same names (sshd -T prints them upper case).
    CHECK(parse_fingerprint_hash("Sha512") == fingerprint_hash::sha512);
    CHECK(parse_fingerprint_hash("sha1") == fingerprint_hash::sha1);
    CHECK(parse_fingerprint_hash("sha384") == fingerprint_hash::sha384);
    CHECK_FALSE(parse_fingerprint_hash(""));
}

// Huima's specification's own examples, and what ssh-keygen -B prints.
TEST_CASE("fingerprint: bubble babble")
{
    auto bb = [](std::string_view s) { return bubblebabble(as_bytes(s)); };
    CHECK(bb("") == "xexax");
    CHECK(bb("1234567890") == "xesef-disof-gytuf-katof-movif-baxux");
    CHECK(bb("Pineapple") == "xigak-nyryk-humil-bosek-sonax");
}
