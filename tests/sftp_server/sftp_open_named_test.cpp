// open-named@longhaul-ssh.org (docs/PROTOCOL.md): OPEN with a handle the
// client names, so that READs can follow it in the same flight.
#include "sshd/sftp/sftp_server.hpp"

#include "tests/sftp_server/sftp_server_harness.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {


bytes name(std::string_view s) { return bytes(s.begin(), s.end()); }

open_named_request named(bytes handle, std::string path, std::uint32_t pflags = fxf::read)
{
    return open_named_request{.id = 0, .handle = std::move(handle), .path = std::move(path), .pflags = pflags,
                              .attributes = {}};
}

std::uint32_t status_in(const reply& r)
{
    REQUIRE(std::holds_alternative<status_reply>(r));
    return std::get<status_reply>(r).code;
}

} // namespace

TEST_CASE("sftp server: open-named answers with the client's name, and READs in the same flight use it")
{
    sftp_harness h;
    h.dir.write("/f", "hello, named");
    // The open and two READs in one write, as the client sends them: the
    // answers come in order, the handle first.
    auto with_id = [](auto m, std::uint32_t id) {
        m.id = id;
        return m.encode(); // one framed packet
    };
    bytes flight = with_id(named(name("n0001"), "/f"), 1);
    const bytes r1 = with_id(read_request{.id = 0, .handle = name("n0001"), .offset = 0, .length = 5}, 2);
    const bytes r2 = with_id(read_request{.id = 0, .handle = name("n0001"), .offset = 7, .length = 100}, 3);
    flight.insert(flight.end(), r1.begin(), r1.end());
    flight.insert(flight.end(), r2.begin(), r2.end());
    h.out.clear();
    const auto replies = h.exchange(flight);
    REQUIRE(replies.size() == 3);
    REQUIRE(std::holds_alternative<handle_reply>(replies[0]));
    CHECK(std::get<handle_reply>(replies[0]).handle == name("n0001"));
    REQUIRE(std::holds_alternative<data_reply>(replies[1]));
    const auto d1 = std::get<data_reply>(replies[1]).data;
    CHECK(std::string(d1.begin(), d1.end()) == "hello");
    const auto d2 = std::get<data_reply>(replies[2]).data;
    CHECK(std::string(d2.begin(), d2.end()) == "named");
    // Logged as OPEN is.
    CHECK(h.logged("open \"/f\" flags READ mode 0666"));
    CHECK(h.srv->open_handles() == 1);
    CHECK(h.status_of(close_request{.handle = name("n0001")}) == ok);
    CHECK(h.logged("close \"/f\" bytes read 10 written 0"));
    CHECK(h.srv->open_handles() == 0);
    // Closed, the name is gone, and free for another open.
    CHECK(h.status_of(read_request{.handle = name("n0001"), .offset = 0, .length = 1}) == failure);
    const auto again = h.call(named(name("n0001"), "/f"));
    CHECK(std::holds_alternative<handle_reply>(again));
}

TEST_CASE("sftp server: open-named writes as OPEN does, and a named handle is refused where OPEN is")
{
    sftp_harness h;
    const auto r = h.call(named(name("w1"), "/new", fxf::write | fxf::creat | fxf::trunc));
    REQUIRE(std::holds_alternative<handle_reply>(r));
    const std::string text = "written";
    CHECK(h.status_of(write_request{.handle = name("w1"), .offset = 0, .data = as_bytes(text)}) == ok);
    CHECK(h.status_of(close_request{.handle = name("w1")}) == ok);
    CHECK(h.dir.read("/new") == text);

    server_options ro;
    ro.read_only = true;
    sftp_harness g(ro);
    CHECK(status_in(g.call(named(name("w2"), "/new", fxf::write | fxf::creat))) == permission_denied);
    CHECK(g.logged("Refusing open request in read-only mode"));

    server_options denied;
    denied.denied = std::vector<std::string>{"open"};
    sftp_harness d(denied, false);
    d.out.clear();
    auto v = d.exchange(init_request{}.encode());
    REQUIRE(v.size() == 1);
    for (const auto& e : std::get<version_reply>(v[0]).extensions)
        CHECK(e.name != "open-named@longhaul-ssh.org"); // not offered where OPEN is refused
    d.dir.write("/f", "x");
    CHECK(status_in(d.call(named(name("r1"), "/f"))) == permission_denied);
    CHECK(d.logged("Refusing denylisted open request"));
    CHECK(d.srv->open_handles() == 0);

    server_options itself;
    itself.denied = std::vector<std::string>{"open-named"};
    sftp_harness n(itself);
    n.dir.write("/f", "x");
    CHECK(status_in(n.call(named(name("r1"), "/f"))) == permission_denied);
    CHECK(n.logged("Refusing denylisted open-named request"));
}

TEST_CASE("sftp server: open-named refuses names it could give out, names in use, empty and long names")
{
    sftp_harness h;
    h.dir.write("/f", "x");
    const bytes own = h.open("/f", fxf::read); // one of the server's own
    REQUIRE(own.size() == 8);
    CHECK(status_in(h.call(named(own, "/f"))) == failure);
    CHECK(h.logged("process_extended_open_named: handle of 8 bytes refused"));
    CHECK(status_in(h.call(named(bytes{}, "/f"))) == failure);
    CHECK(status_in(h.call(named(bytes(33, 'x'), "/f"))) == failure);
    CHECK(std::holds_alternative<handle_reply>(h.call(named(bytes(32, 'x'), "/f"))));
    CHECK(std::holds_alternative<handle_reply>(h.call(named(name("a"), "/f"))));
    CHECK(status_in(h.call(named(name("a"), "/f"))) == failure);
    CHECK(h.logged("process_extended_open_named: handle of 1 bytes refused (in use)"));
    CHECK(h.srv->open_handles() == 3);
    // The server's own handles and the named ones do not mix up.
    CHECK(h.status_of(close_request{.handle = own}) == ok);
    CHECK(std::holds_alternative<data_reply>(h.call(read_request{.handle = name("a"), .offset = 0, .length = 1})));
}

TEST_CASE("sftp server: READs behind a failed open-named find no handle, and the session goes on")
{
    sftp_harness h;
    auto with_id = [](auto m, std::uint32_t id) {
        m.id = id;
        return m.encode();
    };
    bytes flight = with_id(named(name("m1"), "/missing"), 1);
    const bytes r1 = with_id(read_request{.id = 0, .handle = name("m1"), .offset = 0, .length = 5}, 2);
    flight.insert(flight.end(), r1.begin(), r1.end());
    h.out.clear();
    const auto replies = h.exchange(flight);
    REQUIRE(replies.size() == 2);
    CHECK(status_in(replies[0]) == no_such_file);
    CHECK(status_in(replies[1]) == failure);
    CHECK(h.srv->open_handles() == 0);
    h.dir.write("/f", "");
    CHECK(std::holds_alternative<handle_reply>(h.call(named(name("m1"), "/f"))));
    CHECK(h.status_of(read_request{.handle = name("m1"), .offset = 0, .length = 5}) == eof);
    // A request cut short is BAD_MESSAGE, as every extension's.
    bytes cut = with_id(named(name("m2"), "/f"), 9);
    const std::uint32_t shorter = 4;
    cut.resize(cut.size() - shorter);
    const std::uint32_t len = static_cast<std::uint32_t>(cut.size() - 4);
    cut[0] = std::uint8_t(len >> 24);
    cut[1] = std::uint8_t(len >> 16);
    cut[2] = std::uint8_t(len >> 8);
    cut[3] = std::uint8_t(len);
    h.out.clear();
    const auto bad = h.exchange(cut);
    REQUIRE(bad.size() == 1);
    CHECK(status_in(bad[0]) == bad_message);
    CHECK(h.logged_containing("process_extended_open_named: parse:"));
}
