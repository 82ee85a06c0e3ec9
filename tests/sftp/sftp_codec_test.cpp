#include "common/sftp/sftp_replies.hpp"
#include "common/sftp/sftp_requests.hpp"
#include "common/sftp/sftp_framing.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::sftp;

namespace {

const bytes handle_a = {0, 0, 0, 1, 0, 0, 0, 7};
const bytes handle_b = {0xff, 0, 0x10};
const std::string write_payload(3000, 'w');

attrs full_attrs()
{
    attrs a;
    a.flags = attr::size | attr::uidgid | attr::permissions | attr::acmodtime | attr::extended;
    a.size = 0x123456789ull;
    a.uid = 1000;
    a.gid = 100;
    a.permissions = 0100644;
    a.atime = 1700000000;
    a.mtime = 1700000001;
    a.extended = {{"acl@example.com", std::string("\0\1\2", 3)}, {"x", ""}};
    return a;
}

// One sample of every request the codec knows.
std::vector<request> sample_requests()
{
    attrs perms;
    perms.flags = attr::permissions;
    perms.permissions = 0600;
    return {
        init_request{.version = 3, .extensions = {{"a@b", "1"}}},
        open_request{.id = 1, .path = "/tmp/x y", .pflags = fxf::write | fxf::creat | fxf::trunc, .attributes = perms},
        close_request{.id = 2, .handle = handle_a},
        read_request{.id = 3, .handle = handle_a, .offset = 1ull << 40, .length = 262144},
        write_request{.id = 4, .handle = handle_a, .offset = 65536, .data = as_bytes(write_payload)},
        lstat_request{.id = 5, .path = "l"},
        fstat_request{.id = 6, .handle = handle_b},
        setstat_request{.id = 7, .path = "/s", .attributes = full_attrs()},
        fsetstat_request{.id = 8, .handle = handle_a, .attributes = perms},
        opendir_request{.id = 9, .path = "/d"},
        readdir_request{.id = 10, .handle = handle_a},
        remove_request{.id = 11, .path = "gone"},
        mkdir_request{.id = 12, .path = "new", .attributes = {}},
        rmdir_request{.id = 13, .path = "old"},
        realpath_request{.id = 14, .path = ""},
        stat_request{.id = 15, .path = "~/f"},
        rename_request{.id = 16, .old_path = "a", .new_path = "b"},
        readlink_request{.id = 17, .path = "link"},
        symlink_request{.id = 18, .target_path = "target", .link_path = "link"},
        posix_rename_request{.id = 19, .old_path = "c", .new_path = "d"},
        statvfs_request{.id = 20, .path = "/"},
        fstatvfs_request{.id = 21, .handle = handle_a},
        hardlink_request{.id = 22, .old_path = "e", .new_path = "f"},
        fsync_request{.id = 23, .handle = handle_a},
        lsetstat_request{.id = 24, .path = "l", .attributes = perms},
        limits_request{.id = 25},
        expand_path_request{.id = 26, .path = "~user/x"},
        copy_data_request{.id = 27, .read_handle = handle_a, .read_offset = 1, .read_length = 0,
                          .write_handle = handle_b, .write_offset = 2},
        home_directory_request{.id = 28, .username = "alice"},
        users_groups_by_id_request{.id = 29, .uids = {{0, 1, 1000}}, .gids = {{0}}},
        extended_request{.id = 30, .name = "vendor@example.com", .data = as_bytes(std::string_view("\0\1opaque", 8))},
        check_file_handle_request{.id = 31, .handle = handle_a, .algorithms = "sha256,sha512", .start_offset = 7,
                                  .length = 1ull << 33, .block_size = 4096},
        check_file_name_request{.id = 32, .path = "/f", .algorithms = "sha512", .start_offset = 0, .length = 0,
                                .block_size = 0},
        open_named_request{.id = 33, .handle = {'n', 0, 0, 0, 7}, .path = "/f", .pflags = fxf::read | fxf::write,
                           .attributes = perms},
    };
}

std::vector<reply> sample_replies()
{
    return {
        version_reply{.version = 3, .extensions = {{std::string(ext::posix_rename), "1"}, {std::string(ext::limits), "1"}}},
        status_reply{.id = 1, .code = 2, .message = "No such file", .language = ""},
        handle_reply{.id = 2, .handle = handle_a},
        data_reply{.id = 3, .data = as_bytes(write_payload)},
        name_reply{.id = 4, .entries = {{"a", "-rw-r--r--    1 root     root            5 Dec  1 03:52 a", full_attrs()},
                                        {"b", "b", {}}}},
        attrs_reply{.id = 5, .attributes = full_attrs()},
        extended_reply{.id = 6, .data = as_bytes(std::string_view("\0\0\0\1", 4))},
    };
}

bytes encode_any(const request& r)
{
    return std::visit([](const auto& m) { return m.encode(); }, r);
}
bytes encode_any(const reply& r)
{
    return std::visit([](const auto& m) { return m.encode(); }, r);
}

// Equality that also compares the span fields byte for byte.
bool same(const request& a, const request& b) { return a.index() == b.index() && encode_any(a) == encode_any(b); }
bool same(const reply& a, const reply& b) { return a.index() == b.index() && encode_any(a) == encode_any(b); }

} // namespace

TEST_CASE("sftp codec: every request round-trips through framing and decode")
{
    for (const auto& r : sample_requests()) {
        const bytes packet = encode_any(r);
        const frame f = read_frame(packet, default_max_packet_length);
        REQUIRE(f.status == errc::ok);
        CHECK(f.size() == packet.size());
        auto d = decode_request(f.packet);
        REQUIRE(d);
        CHECK(same(*d, r));
    }
}

TEST_CASE("sftp codec: structs compare equal after a round trip")
{
    const open_request o{.id = 9, .path = "/p", .pflags = fxf::read, .attributes = full_attrs()};
    const bytes p = o.encode();
    auto d = open_request::decode(byte_span(p).subspan(5));
    REQUIRE(d);
    CHECK(*d == o);
    const users_groups_by_id_reply u{.id = 3, .users = {{"root", "", "daemon"}}, .groups = {{"wheel"}}};
    const bytes q = u.encode();
    auto e = users_groups_by_id_reply::decode(byte_span(q).subspan(5));
    REQUIRE(e);
    CHECK(*e == u);
}

TEST_CASE("sftp codec: every reply round-trips, extended bodies decode by their struct")
{
    for (const auto& r : sample_replies()) {
        const bytes packet = encode_any(r);
        const frame f = read_frame(packet, default_max_packet_length);
        REQUIRE(f.status == errc::ok);
        auto d = decode_reply(f.packet);
        REQUIRE(d);
        CHECK(same(*d, r));
    }
    const statvfs_reply s{.id = 7, .bsize = 4096, .frsize = 4096, .blocks = 100, .bfree = 50, .bavail = 40,
                          .files = 10, .ffree = 5, .favail = 4, .fsid = 0xabcdef, .flag = statvfs_nosuid, .namemax = 255};
    const limits_reply l{.id = 8, .max_packet_length = 263168, .max_read_length = 262144,
                         .max_write_length = 262144, .max_open_handles = 16000};
    for (const bytes& packet : {s.encode(), l.encode()}) {
        auto d = decode_reply(read_frame(packet, default_max_packet_length).packet);
        REQUIRE(d);
        REQUIRE(std::holds_alternative<extended_reply>(*d));
        CHECK(std::get<extended_reply>(*d).id == (packet == s.encode() ? 7u : 8u));
    }
    auto ds = statvfs_reply::decode(byte_span(s.encode()).subspan(5));
    REQUIRE(ds);
    CHECK(*ds == s);
    auto dl = limits_reply::decode(byte_span(l.encode()).subspan(5));
    REQUIRE(dl);
    CHECK(*dl == l);
}

TEST_CASE("sftp codec: known bytes from OpenSSH's sftp-server")
{
    // STATUS "No such file" for request 1, as Debian's sftp-server sends it.
    const status_reply st{.id = 1, .code = 2, .message = "No such file", .language = ""};
    CHECK(to_hex(st.encode()) == "0000001d6500000001000000020000000c4e6f20737563682066696c6500000000");
    // Its limits@openssh.com reply (request 9).
    const limits_reply lim{.id = 9, .max_packet_length = 0x40000, .max_read_length = 0x3fc00,
                           .max_write_length = 0x3fc00, .max_open_handles = 0x4e1b};
    CHECK(to_hex(lim.encode()) ==
          "00000025c9000000090000000000040000000000000003fc00000000000003fc000000000000004e1b");
    // The start of its VERSION reply.
    version_reply v{.version = 3, .extensions = {{"posix-rename@openssh.com", "1"}}};
    CHECK(to_hex(v.encode()) == "00000026020000000300000018706f7369782d72656e616d65406f70656e7373682e636f6d0000000131");
    CHECK(status_message(status_code::no_such_file) == "No such file");
    CHECK(status_message(9u) == "Unknown error");
}

TEST_CASE("sftp codec: every message split at every byte is incomplete until whole")
{
    std::vector<bytes> packets;
    for (const auto& r : sample_requests())
        packets.push_back(encode_any(r));
    for (const auto& r : sample_replies())
        packets.push_back(encode_any(r));
    for (const bytes& packet : packets) {
        for (std::size_t split = 0; split <= packet.size(); ++split) {
            // The first part alone: incomplete unless it is everything.
            const frame head = read_frame(byte_span(packet).first(split), default_max_packet_length);
            if (split < packet.size()) {
                CHECK(head.status == errc::incomplete);
                if (split >= 4)
                    CHECK(head.length == packet.size() - 4);
            } else {
                CHECK(head.status == errc::ok);
            }
            // Both parts in a stream buffer (as a reader accumulates them),
            // followed by a second packet: both come out whole.
            bytes stream(packet.begin(), packet.begin() + static_cast<std::ptrdiff_t>(split));
            stream.insert(stream.end(), packet.begin() + static_cast<std::ptrdiff_t>(split), packet.end());
            stream.insert(stream.end(), packet.begin(), packet.end());
            const frame first = read_frame(stream, default_max_packet_length);
            REQUIRE(first.status == errc::ok);
            const frame second = read_frame(byte_span(stream).subspan(first.size()), default_max_packet_length);
            REQUIRE(second.status == errc::ok);
            CHECK(std::equal(first.packet.begin(), first.packet.end(), second.packet.begin(), second.packet.end()));
        }
    }
}

TEST_CASE("sftp codec: every truncation of every payload fails to decode, never crashes")
{
    for (const auto& r : sample_requests()) {
        const bytes packet = encode_any(r);
        const byte_span body = byte_span(packet).subspan(4);
        for (std::size_t n = 1; n < body.size(); ++n) {
            auto d = decode_request(body.first(n));
            // An unknown extension takes any tail, and INIT's extension list
            // may end at any pair boundary: those prefixes may decode.
            if (std::holds_alternative<extended_request>(r) || std::holds_alternative<init_request>(r))
                continue;
            CHECK_FALSE(d);
        }
    }
    for (const auto& r : sample_replies()) {
        const bytes packet = encode_any(r);
        const byte_span body = byte_span(packet).subspan(4);
        for (std::size_t n = 1; n < body.size(); ++n) {
            auto d = decode_reply(body.first(n));
            if (std::holds_alternative<extended_reply>(r) || std::holds_alternative<version_reply>(r) ||
                std::holds_alternative<status_reply>(r))
                continue;
            CHECK_FALSE(d);
        }
    }
}

TEST_CASE("sftp codec: a trailing byte is rejected")
{
    for (const auto& r : sample_requests()) {
        if (std::holds_alternative<extended_request>(r) || std::holds_alternative<init_request>(r))
            continue;
        bytes body = encode_any(r);
        body.erase(body.begin(), body.begin() + 4);
        body.push_back(0);
        auto d = decode_request(body);
        REQUIRE_FALSE(d);
        CHECK(d.error() == errc::trailing_data);
    }
}

TEST_CASE("sftp framing: incomplete, malformed and too large are told apart")
{
    CHECK(read_frame({}, 100).status == errc::incomplete);
    const bytes three = {0, 0, 0};
    CHECK(read_frame(three, 100).status == errc::incomplete);
    const bytes zero = {0, 0, 0, 0, 1};
    CHECK(read_frame(zero, 100).status == errc::malformed);
    const bytes big = {0, 0, 1, 0, 17};
    const frame f = read_frame(big, 255);
    CHECK(f.status == errc::too_large);
    CHECK(f.length == 256);
    CHECK(f.size() == 260);
    CHECK(read_frame(big, 256).status == errc::incomplete);
    // Exactly at the limit is fine.
    bytes exact = {0, 0, 0, 5, 1, 0, 0, 0, 3};
    CHECK(read_frame(exact, 5).status == errc::ok);
    CHECK(read_frame(exact, 4).status == errc::too_large);
}

TEST_CASE("sftp attrs: unknown flag bits and too many extended pairs are refused")
{
    bytes buf;
    wire_writer(buf).u32(0x10); // a version 4 bit
    wire_reader r(buf);
    attrs::decode(r);
    CHECK(r.error() == errc::malformed);

    bytes many;
    wire_writer w(many);
    w.u32(attr::extended).u32(max_extended_attrs + 1);
    for (std::uint32_t i = 0; i <= max_extended_attrs; ++i)
        w.string("t").string("d");
    wire_reader r2(many);
    attrs::decode(r2);
    CHECK(r2.error() == errc::too_large);

    // A count far beyond the data fails at once, without allocating for it.
    bytes lying;
    wire_writer(lying).u32(attr::extended).u32(max_extended_attrs);
    wire_reader r3(lying);
    attrs::decode(r3);
    CHECK(r3.error() == errc::incomplete);

    attrs a = full_attrs();
    bytes ok;
    wire_writer wo(ok);
    a.encode(wo);
    wire_reader r4(ok);
    CHECK(attrs::decode(r4) == a);
    CHECK(r4.finish());
}

TEST_CASE("sftp codec: malformed fields")
{
    // A path with an embedded NUL.
    stat_request s{.id = 1, .path = std::string("/tmp\0x", 6)};
    bytes p = s.encode();
    auto d = decode_request(byte_span(p).subspan(4));
    REQUIRE_FALSE(d);
    CHECK(d.error() == errc::malformed);
    // A handle reply over 256 bytes.
    handle_reply h{.id = 1, .handle = bytes(257, 1)};
    bytes hp = h.encode();
    auto dh = decode_reply(byte_span(hp).subspan(4));
    REQUIRE_FALSE(dh);
    CHECK(dh.error() == errc::too_large);
    // A packed id list that is not a whole number of ids.
    bytes u;
    wire_writer(u).u8(fxp::extended).u32(1).string(ext::users_groups_by_id).string("abcde").string("");
    auto du = decode_request(u);
    REQUIRE_FALSE(du);
    CHECK(du.error() == errc::malformed);
    // Not a request / not a reply.
    const bytes status_type = {fxp::status, 0, 0, 0, 1};
    CHECK(decode_request(status_type).error() == errc::unsupported);
    const bytes open_type = {fxp::open, 0, 0, 0, 1};
    CHECK(decode_reply(open_type).error() == errc::unsupported);
    CHECK(decode_request({}).error() == errc::incomplete);
    // A status from a version 0-2 server: no message.
    bytes old;
    wire_writer(old).u8(fxp::status).u32(4).u32(1);
    auto ds = decode_reply(old);
    REQUIRE(ds);
    CHECK(std::get<status_reply>(*ds).code == 1);
    // A NAME reply claiming four billion entries ends at the data.
    bytes names;
    wire_writer(names).u8(fxp::name).u32(1).u32(0xffffffff).string("a").string("a").u32(0);
    CHECK(decode_reply(names).error() == errc::incomplete);
    // An extension request decoded as another extension's struct.
    auto wrong = statvfs_request::decode(byte_span(fsync_request{.id = 1, .handle = handle_a}.encode()).subspan(5));
    CHECK(wrong.error() == errc::invalid_argument);
    CHECK(peek_request_id(byte_span(p).subspan(4)) == 1u);
    const bytes init = {fxp::init, 0, 0, 0, 3};
    CHECK_FALSE(peek_request_id(init));
}

TEST_CASE("sftp codec: the in-place DATA header matches data_reply")
{
    const std::string payload = "file bytes";
    const data_reply d{.id = 77, .data = as_bytes(payload)};
    bytes built(data_reply_header_size + payload.size());
    write_data_reply_header(built.data(), 77, static_cast<std::uint32_t>(payload.size()));
    std::copy(payload.begin(), payload.end(), built.begin() + data_reply_header_size);
    CHECK(built == d.encode());
}

TEST_CASE("sftp codec: an unknown extension keeps its name and raw data")
{
    const bytes raw = {1, 2, 3};
    extended_request e{.id = 5, .name = "x@y", .data = raw};
    bytes p = e.encode();
    auto d = decode_request(byte_span(p).subspan(4));
    REQUIRE(d);
    REQUIRE(std::holds_alternative<extended_request>(*d));
    const auto& got = std::get<extended_request>(*d);
    CHECK(got.name == "x@y");
    CHECK(bytes(got.data.begin(), got.data.end()) == raw);
    version_reply v = std::get<version_reply>(sample_replies()[0]);
    REQUIRE(v.find(ext::limits) != nullptr);
    CHECK(*v.find(ext::limits) == "1");
    CHECK(v.find(ext::copy_data) == nullptr);
}

TEST_CASE("sftp codec: check-file requests and the check-file reply")
{
    const check_file_handle_request q{.id = 5, .handle = handle_a, .algorithms = "sha256", .start_offset = 1,
                                      .length = 2, .block_size = 256};
    const bytes p = q.encode();
    // string "check-file-handle", string handle, string list, uint64, uint64, uint32.
    CHECK(p.size() == 4 + 1 + 4 + (4 + 17) + (4 + handle_a.size()) + (4 + 6) + 8 + 8 + 4);
    auto d = check_file_handle_request::decode(byte_span(p).subspan(5));
    REQUIRE(d);
    CHECK(*d == q);

    const check_file_reply r{.id = 9, .algorithm = "sha256", .hashes = bytes(64, 0xab)};
    const bytes b = r.encode();
    // The hashes run to the end of the packet, without a length of their own.
    CHECK(b.size() == 4 + 1 + 4 + (4 + 10) + (4 + 6) + 64);
    auto e = check_file_reply::decode(byte_span(b).subspan(5));
    REQUIRE(e);
    CHECK(*e == r);
    auto generic = decode_reply(byte_span(b).subspan(4));
    REQUIRE(generic);
    const auto& x = std::get<extended_reply>(*generic);
    auto f = check_file_reply::decode_body(x.id, x.data);
    REQUIRE(f);
    CHECK(*f == r);
    // No hash at all is a valid reply (the caller checks the size).
    const check_file_reply empty{.id = 1, .algorithm = "sha512", .hashes = {}};
    REQUIRE(check_file_reply::decode(byte_span(empty.encode()).subspan(5)));
}

TEST_CASE("sftp codec: malformed check-file replies")
{
    // Another extension's reply name.
    bytes other;
    {
        wire_writer w(other);
        w.u32(9).string("limits").string("sha256").raw(bytes(32, 1));
    }
    CHECK(check_file_reply::decode(other).error() == errc::invalid_argument);
    // Cut inside the name, inside the algorithm; a NUL in the algorithm.
    const bytes good = check_file_reply{.id = 9, .algorithm = "sha256", .hashes = bytes(32, 1)}.encode();
    const byte_span payload = byte_span(good).subspan(5);
    CHECK_FALSE(check_file_reply::decode(payload.first(2)));
    CHECK_FALSE(check_file_reply::decode(payload.first(4 + 4 + 5)));
    CHECK_FALSE(check_file_reply::decode(payload.first(4 + 4 + 10 + 4 + 3)));
    bytes nul;
    {
        wire_writer w(nul);
        w.u32(9).string("check-file").string(std::string_view("sha\0" "256", 7));
    }
    CHECK_FALSE(check_file_reply::decode(nul));
}
