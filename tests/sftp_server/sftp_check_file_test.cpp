// check-file-handle and check-file-name (draft-ietf-secsh-filexfer-
// extensions-00 §3): the hash of a range, the first algorithm of the
// client's list the server has, block hashes, and every way a request can
// be refused (bad handle, no algorithm, small blocks, ranges past the end
// or over the per-request bound, replies that would not fit a packet).
#include "sshd/sftp/sftp_server.hpp"

#include "common/crypto/hash.hpp"
#include "tests/sftp_server/sftp_server_harness.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

check_file_reply check_reply_of(const reply& r)
{
    if (auto* s = std::get_if<status_reply>(&r))
        FAIL("expected check-file, got status " << s->code << " " << s->message);
    REQUIRE(std::holds_alternative<extended_reply>(r));
    const auto& e = std::get<extended_reply>(r);
    auto c = check_file_reply::decode_body(e.id, e.data);
    REQUIRE(c);
    return *c;
}

bytes sha_of(hash_alg alg, const std::string& s)
{
    return digest(alg, as_bytes(std::string_view(s)));
}

std::string check_file_pattern(std::size_t n)
{
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = char((i * 131 + i / 977) & 0xff);
    return s;
}

} // namespace

TEST_CASE("sftp check-file: the hash of a range, by handle and by name")
{
    sftp_harness h;
    const std::string data = check_file_pattern(1000000);
    h.dir.write("/f", data);
    const bytes f = h.open("/f", fxf::read);

    // The whole file (length 0: to the end).
    auto c = check_reply_of(h.call(check_file_handle_request{.handle = f, .algorithms = "sha256"}));
    CHECK(c.algorithm == "sha256");
    CHECK(c.hashes == sha_of(hash_alg::sha256, data));
    // A range in the middle.
    c = check_reply_of(h.call(
        check_file_handle_request{.handle = f, .algorithms = "sha256", .start_offset = 1234, .length = 500000}));
    CHECK(c.hashes == sha_of(hash_alg::sha256, data.substr(1234, 500000)));
    // A range that runs past the end is cut there.
    c = check_reply_of(h.call(
        check_file_handle_request{.handle = f, .algorithms = "sha256", .start_offset = 999000, .length = 5000}));
    CHECK(c.hashes == sha_of(hash_alg::sha256, data.substr(999000)));
    // At the very end: the hash of nothing.
    c = check_reply_of(h.call(check_file_handle_request{.handle = f, .algorithms = "sha256", .start_offset = 1000000}));
    CHECK(c.hashes == sha_of(hash_alg::sha256, ""));
    // The first algorithm of the list the server has.
    c = check_reply_of(h.call(check_file_handle_request{.handle = f, .algorithms = "md5,crc32,sha512,sha256"}));
    CHECK(c.algorithm == "sha512");
    CHECK(c.hashes == sha_of(hash_alg::sha512, data));
    // By name, without a handle.
    c = check_reply_of(h.call(check_file_name_request{.path = "/f", .algorithms = "sha384", .length = 10}));
    CHECK(c.algorithm == "sha384");
    CHECK(c.hashes == sha_of(hash_alg::sha384, data.substr(0, 10)));
    CHECK(h.logged_containing("check-file \"/f\" algorithms \"sha384\" offset 0 length 10 block-size 0"));
    // The handle was not moved or closed by any of it.
    CHECK(std::holds_alternative<data_reply>(h.call(read_request{.handle = f, .offset = 0, .length = 4})));
}

TEST_CASE("sftp check-file: one hash per block, the last block short")
{
    sftp_harness h;
    const std::string data = check_file_pattern(10000);
    h.dir.write("/f", data);
    const bytes f = h.open("/f", fxf::read);
    auto c = check_reply_of(h.call(check_file_handle_request{.handle = f, .algorithms = "sha256", .block_size = 4096}));
    REQUIRE(c.hashes.size() == 3 * 32);
    bytes want;
    for (std::size_t off = 0; off < data.size(); off += 4096) {
        const bytes d = sha_of(hash_alg::sha256, data.substr(off, 4096));
        want.insert(want.end(), d.begin(), d.end());
    }
    CHECK(c.hashes == want);
    // A block of exactly 256 bytes, the smallest the draft allows.
    c = check_reply_of(h.call(
        check_file_handle_request{.handle = f, .algorithms = "sha256", .length = 512, .block_size = 256}));
    CHECK(c.hashes.size() == 2 * 32);
}

TEST_CASE("sftp check-file: refusals (bad handle, no algorithm, small blocks, out of range, too long)")
{
    server_options o;
    o.max_check_length = 64 * 1024;
    sftp_harness h(o);
    h.dir.write("/f", check_file_pattern(100000));
    const bytes f = h.open("/f", fxf::read);

    CHECK(h.status_of(check_file_handle_request{.handle = bytes{1, 2, 3}, .algorithms = "sha256"}) == failure);
    CHECK(h.status_of(check_file_handle_request{.handle = bytes(8, 0), .algorithms = "sha256"}) == failure);
    // None of the client's algorithms (MD5 and SHA-1 are not offered).
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = "md5,sha1,crc32", .length = 10}) ==
          op_unsupported);
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = "", .length = 10}) == op_unsupported);
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = ",sha256x,", .length = 10}) ==
          op_unsupported);
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = "sha256", .length = 1000,
                                                .block_size = 255}) == failure);
    // Past the end of the file, and far past anything pread takes.
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = "sha256", .start_offset = 100001,
                                                .length = 1}) == eof);
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = "sha256",
                                                .start_offset = ~std::uint64_t{0}, .length = ~std::uint64_t{0}}) ==
          eof);
    // More than a request may hash: refused, whether asked as "to the end"
    // or as a huge length; within the bound it is served.
    auto r = h.call(check_file_handle_request{.handle = f, .algorithms = "sha256"});
    REQUIRE(std::holds_alternative<status_reply>(r));
    CHECK(std::get<status_reply>(r).code == failure);
    CHECK(std::get<status_reply>(r).message == "Range too long: at most 65536 bytes per request");
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = "sha256", .start_offset = 1,
                                                .length = ~std::uint64_t{0} - 1}) == failure);
    CHECK(std::holds_alternative<extended_reply>(
        h.call(check_file_handle_request{.handle = f, .algorithms = "sha256", .length = 64 * 1024})));
    // Block hashes that would not fit one reply packet.
    server_options big;
    sftp_harness g(big);
    g.dir.write("/g", check_file_pattern(3 * 1024 * 1024));
    const bytes gh = g.open("/g", fxf::read);
    CHECK(g.status_of(check_file_handle_request{.handle = gh, .algorithms = "sha512", .block_size = 256}) == failure);
    // A handle opened for writing only, a directory handle, a missing name.
    const bytes w = h.open("/w", fxf::write | fxf::creat);
    CHECK(h.status_of(check_file_handle_request{.handle = w, .algorithms = "sha256"}) == permission_denied);
    const bytes d = h.handle_of(opendir_request{.path = "/"});
    CHECK(h.status_of(check_file_handle_request{.handle = d, .algorithms = "sha256"}) == failure);
    CHECK(h.status_of(check_file_name_request{.path = "/missing", .algorithms = "sha256"}) == no_such_file);
    CHECK(h.status_of(check_file_name_request{.path = "/", .algorithms = "sha256"}) == failure);
}

TEST_CASE("sftp check-file: malformed requests are answered BAD_MESSAGE")
{
    sftp_harness h;
    h.dir.write("/f", "abc");
    const bytes f = h.open("/f", fxf::read);
    // Cut before the block size.
    bytes cut = check_file_handle_request{.id = 7, .handle = f, .algorithms = "sha256"}.encode();
    cut.resize(cut.size() - 2);
    store_u32(cut.data(), std::uint32_t(cut.size() - 4));
    h.out.clear();
    auto r = h.exchange(cut);
    REQUIRE(r.size() == 1);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
    CHECK(h.logged("process_extended_check_file_handle: parse: incomplete message"));
    // A trailing byte.
    h.out.clear();
    bytes extra = check_file_name_request{.id = 8, .path = "/f", .algorithms = "sha256"}.encode();
    extra.push_back(0);
    store_u32(extra.data(), std::uint32_t(extra.size() - 4));
    r = h.exchange(extra);
    REQUIRE(r.size() == 1);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
    // A NUL in the algorithm list.
    h.out.clear();
    r = h.exchange(check_file_handle_request{.id = 9, .handle = f, .algorithms = std::string("sha256\0x", 8)}.encode());
    REQUIRE(r.size() == 1);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
}

TEST_CASE("sftp check-file: -P check-file-handle refuses it and stops advertising it")
{
    server_options o;
    o.denied = std::vector<std::string>{"check-file-handle"};
    sftp_harness h(o);
    h.dir.write("/f", "abc");
    const bytes f = h.open("/f", fxf::read);
    CHECK(h.status_of(check_file_handle_request{.handle = f, .algorithms = "sha256"}) == permission_denied);
    CHECK(h.logged("refusing to advertise disallowed extension check-file-handle"));
    // The name form is another request, still allowed; read-only mode
    // allows both (they only read).
    CHECK(std::holds_alternative<extended_reply>(
        h.call(check_file_name_request{.path = "/f", .algorithms = "sha256"})));
    server_options ro;
    ro.read_only = true;
    sftp_harness g(ro);
    g.dir.write("/f", "abc");
    const bytes gf = g.open("/f", fxf::read);
    CHECK(std::holds_alternative<extended_reply>(
        g.call(check_file_handle_request{.handle = gf, .algorithms = "sha256"})));
}
