// ssh-keygen -k: KRL specifications read as OpenSSH 9.2's ssh-keygen reads
// them (the same KRL bytes as its KRLs in tests/data, its messages for bad
// lines), and the command's files: new, updated (-u), versioned (-z).
#include "ssh/keygen/keygen_krl.hpp"

#include "common/keys/key_lines.hpp"
#include "tests/file_text.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace longhaul;
using namespace longhaul::keygen;

namespace {

const std::string krl_data_dir = std::string(LONGHAUL_TEST_DATA) + "/";

std::string krl_data(const std::string& name)
{
    const std::string text = test::read_whole_file(krl_data_dir + name);
    REQUIRE_FALSE(text.empty());
    return text;
}

bytes key_blob(const std::string& name)
{
    auto line = parse_public_key_line(krl_data(name).substr(0, krl_data(name).find('\n')));
    REQUIRE(line.has_value());
    return line->key.blob();
}

krl_ca ca_of(const std::string& name) { return {true, key_blob(name)}; }

// A builder with the header of an OpenSSH-made KRL, for byte comparisons.
krl_writer with_header_of(const bytes& made_by_openssh)
{
    auto k = parse_krl(made_by_openssh);
    REQUIRE(k.has_value());
    krl_writer b;
    b.set_version(k->version);
    b.set_generated_date(k->generated_date);
    b.set_comment(k->comment);
    return b;
}

bytes as_blob(const std::string& s) { return to_bytes(as_bytes(s)); }

std::string spec_failure(const std::string& spec, const krl_ca& ca = {})
{
    krl_writer b;
    try {
        revoke_from_text(b, spec, "spec", ca);
    } catch (const keygen_exit& e) {
        CHECK(e.status() == 255);
        return e.message();
    }
    return "(no error)";
}

class krl_scratch {
public:
    krl_scratch()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "longhaul-keygen-krl.XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        dir_ = tmpl;
    }
    ~krl_scratch() { std::filesystem::remove_all(dir_); }
    std::string write(const std::string& name, const std::string& text)
    {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }

private:
    std::string dir_;
};

} // namespace

TEST_CASE("-k specs give the KRLs OpenSSH's ssh-keygen made from them, byte for byte")
{
    // keys.spec: key:, sha1:, sha256: and hash: lines, with a comment line.
    const bytes keys = as_blob(krl_data("keys/krl/keys.krl"));
    krl_writer b = with_header_of(keys);
    revoke_from_text(b, krl_data("keys/krl/keys.spec"), "keys.spec", {});
    CHECK(b.to_blob() == keys);

    const bytes serial42 = as_blob(krl_data("certs/krl_serial42"));
    krl_writer s = with_header_of(serial42);
    revoke_from_text(s, "serial: 42\n", "krl.spec", ca_of("certs/ca_ed25519.pub"));
    CHECK(s.to_blob() == serial42);

    const bytes id = as_blob(krl_data("certs/krl_id_rsa_user"));
    krl_writer i = with_header_of(id);
    revoke_from_text(i, "id: rsa user\n", "krl.spec", ca_of("certs/ca_rsa.pub"));
    CHECK(i.to_blob() == id);
}

TEST_CASE("-k specs: the serials of certs.spec and a certificate file, as OpenSSH revokes them")
{
    krl_writer b;
    const krl_ca ca = ca_of("keys/krl/ca_key.pub");
    revoke_from_text(b, krl_data("keys/krl/certs.spec"), "certs.spec", ca);
    revoke_from_text(b, krl_data("keys/krl/ecdsa521-cert.pub"), "ecdsa521-cert.pub", ca);
    auto ours = parse_krl(b.to_blob());
    auto theirs = parse_krl(as_blob(krl_data("keys/krl/certs.krl")));
    REQUIRE(ours.has_value());
    REQUIRE(theirs.has_value());
    REQUIRE(ours->authorities.size() == 1);
    const auto& a = ours->authorities[0];
    const auto& t = theirs->authorities.at(0);
    CHECK(a.ca_key == t.ca_key);
    CHECK(a.key_ids == t.key_ids);
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    for (std::uint64_t s : {0ul, 1ul, 2ul, 4ul, 5ul, 9ul, 10ul, 31ul, 32ul, 33ul, 99ul, 100ul, 101ul, 102ul, 103ul,
                            104ul, 105ul, 999ul, 1000ul, 1003ul, 1004ul, 4241ul, 4242ul, 4243ul, 1000000ul, 2000000ul,
                            4999999ul, 5000000ul, 6000000ul, 6000001ul, 0xfffffffffffffeffu, 0xffffffffffffff00u, max})
        CHECK_MESSAGE(a.serial_revoked(s) == t.serial_revoked(s), s);
}

TEST_CASE("-k spec lines: prefixes, blanks, comments, octal and hex, certificates without serial")
{
    const krl_ca ca = ca_of("keys/krl/ca_key.pub");
    krl_writer b;
    revoke_from_text(b,
                     "  SeRiAl:  0x10-0x12  # a comment\n"
                     "\tID:\t spaced  id  \n"
                     "serial: 010\n"     // octal 8
                     "serial:5- 7\n"     // strtoull skips the blank after '-'
                     "serial: -5\n"      // strtoull negates: 2^64 - 5
                     "\n# only a comment\n   \n"
                     "id:\n",            // the empty key ID
                     "spec", ca);
    auto k = parse_krl(b.to_blob());
    REQUIRE(k.has_value());
    REQUIRE(k->authorities.size() == 1);
    const auto& a = k->authorities[0];
    for (std::uint64_t s : {5ul, 7ul, 8ul, 16ul, 18ul, std::numeric_limits<std::uint64_t>::max() - 4})
        CHECK_MESSAGE(a.serial_revoked(s), s);
    for (std::uint64_t s : {4ul, 9ul, 15ul, 19ul})
        CHECK_FALSE_MESSAGE(a.serial_revoked(s), s);
    CHECK(a.key_ids == std::vector<std::string>{"", "spaced  id"});

    // "-s none": any CA.
    krl_writer any;
    revoke_from_text(any, "serial: 3\n", "spec", {true, {}});
    auto w = parse_krl(any.to_blob());
    REQUIRE(w.has_value());
    CHECK(w->authorities.at(0).ca_key.empty());
}

TEST_CASE("-k spec errors: OpenSSH's messages")
{
    const krl_ca ca = ca_of("keys/krl/ca_key.pub");
    CHECK(spec_failure("serial: 5\n") == "revoking certificates by serial number requires specification of a CA key");
    CHECK(spec_failure("id: x\n") == "revoking certificates by key ID requires specification of a CA key");
    CHECK(spec_failure("serial: 0\n", ca) == "update_krl_from_file: revoke serial failed");
    CHECK(spec_failure("serial: 5-5\n", ca) == "spec:1: invalid serial range 5:5");
    CHECK(spec_failure("\nserial: 6-5\n", ca) == "spec:2: invalid serial range 6:5");
    CHECK(spec_failure("serial: abc\n", ca) == "spec:1: invalid serial \"abc\"");
    CHECK(spec_failure("serial: 5x\n", ca) == "spec:1: invalid serial \"5x\"");
    CHECK(spec_failure("serial: 0x10 - 0x12\n", ca) == "spec:1: invalid serial \"0x10 - 0x12\"");
    CHECK(spec_failure("serial: 5-\n", ca) == "spec:1: invalid serial \"\"");
    CHECK(spec_failure("serial:\n", ca) == "spec:1: invalid serial \"\"");
    CHECK(spec_failure("serial: 99999999999999999999\n", ca) == "spec:1: serial out of range");
    CHECK(spec_failure("serial: 1-99999999999999999999\n", ca) == "spec:1: serial out of range");
    CHECK(spec_failure("hash: MD5:xx\n") == "spec:1: unsupported hash algorithm");
    CHECK(spec_failure("hash: sha256:abc\n") == "spec:1: unsupported hash algorithm");
    CHECK(spec_failure("hash: SHA256:abc\n") == "update_krl_from_file: revoke key failed: invalid format");
    CHECK(spec_failure("hash: SHA256:!!!!\n") == "spec:1: decode hash failed: invalid format");
    CHECK(spec_failure("garbage line\n") == "spec:1: invalid key: invalid format");
    CHECK(spec_failure("key: garbage\n") == "spec:1: invalid key: invalid format");
    CHECK(spec_failure("sha256:\n") == "spec:1: invalid key: invalid format");
    CHECK(spec_failure("ssh-ed25519 AAAA\n") == "spec:1: invalid key: invalid format");
    const std::string ed = krl_data("keys/ed25519_plain_key.pub");
    const std::string encoded = ed.substr(ed.find(' ') + 1, ed.find(' ', ed.find(' ') + 1) - ed.find(' ') - 1);
    CHECK(spec_failure("ssh-rsa " + encoded + "\n") == "spec:1: invalid key: key type does not match");
    CHECK(spec_failure("ssh-ed25519 " + encoded + "#comment\n") == "(no error)");
}

TEST_CASE("keygen_generate_krl: a new KRL, -u, -z, -C and the files' messages")
{
    krl_scratch dir;
    const std::string out = dir.path("revoked.krl");
    keygen_options o;
    o.quiet = true;
    o.file = out;
    o.comment = "first";
    krl_generate_request req;
    req.ca_path = krl_data_dir + "keys/krl/ca_key.pub";
    req.version = 4;
    req.files = {dir.write("spec", "serial: 1-3\nid: alice\n"), krl_data_dir + "keys/ed25519_plain_key.pub"};
    const auto before = static_cast<std::uint64_t>(std::time(nullptr));
    REQUIRE(keygen_generate_krl(o, req) == 0);
    krl first = load_krl(out);
    CHECK(first.version == 4);
    CHECK(first.comment == "first");
    CHECK(first.generated_date >= before);
    CHECK(first.authorities.at(0).serial_revoked(3));
    CHECK(first.keys.size() == 1);

    // -u keeps the date, version and comment unless -z or -C say otherwise.
    o.comment.reset();
    req.update = true;
    req.version = 0;
    req.files = {dir.write("more", "serial: 4\n")};
    REQUIRE(keygen_generate_krl(o, req) == 0);
    krl second = load_krl(out);
    CHECK(second.version == 4);
    CHECK(second.comment == "first");
    CHECK(second.generated_date == first.generated_date);
    CHECK(second.authorities.at(0).serial_revoked(4));
    CHECK(second.authorities.at(0).key_id_revoked("alice"));
    CHECK(second.keys == first.keys);

    // Without -u an existing KRL is replaced.
    req.update = false;
    REQUIRE(keygen_generate_krl(o, req) == 0);
    CHECK_FALSE(load_krl(out).authorities.at(0).serial_revoked(1));

    const auto fails = [&](const keygen_options& opts, const krl_generate_request& r) -> std::string {
        try {
            keygen_generate_krl(opts, r);
        } catch (const keygen_exit& e) {
            CHECK(e.status() == 255);
            return e.message();
        }
        return "(no error)";
    };
    keygen_options no_file = o;
    no_file.file.reset();
    CHECK(fails(no_file, req) == "KRL generation requires an output file");
    keygen_options missing = o;
    missing.file = dir.path("absent.krl");
    krl_generate_request upd = req;
    upd.update = true;
    CHECK(fails(missing, upd) == "KRL \"" + dir.path("absent.krl") + "\" does not exist");
    keygen_options not_krl = o;
    not_krl.file = dir.write("not-a-krl", "ssh-ed25519 AAAA\n");
    CHECK(fails(not_krl, upd) == "Invalid KRL file " + dir.path("not-a-krl") + ": KRL file has invalid magic number");
    krl_generate_request bad_ca = req;
    bad_ca.ca_path = dir.path("no-ca.pub");
    CHECK(fails(o, bad_ca) == "Cannot load CA public key " + dir.path("no-ca.pub") + ": No such file or directory");
    krl_generate_request no_input = req;
    no_input.files = {dir.path("no-such-spec")};
    CHECK(fails(o, no_input) == "fopen " + dir.path("no-such-spec") + ": No such file or directory");
    keygen_options in_dir = o;
    in_dir.file = dir.path("");
    CHECK(fails(in_dir, req).starts_with("write " + dir.path("") + ": "));
}
