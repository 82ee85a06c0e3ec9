#include "sshd/privsep/monitor_channel.hpp"
#include "sshd/privsep/monitor_messages.hpp"

#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

using namespace longhaul;
using namespace longhaul::privsep;

namespace {

bytes text_bytes(std::string_view s) { return bytes(s.begin(), s.end()); }

// Every proper prefix of a valid message is refused, and so is the message
// with a byte added: decoders read exactly what was encoded.
template <class Decode>
void check_exact(const bytes& msg, Decode decode)
{
    CHECK(decode(msg));
    for (std::size_t n = 0; n < msg.size(); ++n)
        CHECK_FALSE(decode(byte_span(msg.data(), n)));
    bytes longer = msg;
    longer.push_back(0);
    CHECK_FALSE(decode(longer));
}

} // namespace

TEST_CASE("monitor messages: each request and reply decodes to what was encoded, exactly")
{
    sign_request s{text_bytes("blob"), "rsa-sha2-256", bytes(32, 7)};
    auto s2 = decode_sign_request(encode(s));
    REQUIRE(s2);
    CHECK(s2->key_blob == s.key_blob);
    CHECK(s2->algorithm == s.algorithm);
    CHECK(s2->data == s.data);
    check_exact(encode(s), decode_sign_request);
    check_exact(encode(sign_reply{true, text_bytes("sig")}), decode_sign_reply);

    lookup_user_reply u;
    u.status = user_status::valid;
    u.is_root = true;
    u.level = log_level::debug2;
    u.settings = server_auth_settings{};
    u.settings->authentication_methods = {"publickey,password", "keyboard-interactive:pam"};
    u.settings->root_login = permit_root_login::forced_commands_only;
    u.settings->banner = "hello\n";
    u.settings->max_auth_tries = 3;
    u.settings->hostbased_authentication = true;
    u.settings->hostbased_accepted_algorithms = "ssh-ed25519";
    auto u2 = decode_lookup_user_reply(encode(u));
    REQUIRE(u2);
    CHECK(u2->status == user_status::valid);
    CHECK(u2->is_root);
    CHECK(u2->level == log_level::debug2);
    REQUIRE(u2->settings);
    CHECK(u2->settings->authentication_methods == u.settings->authentication_methods);
    CHECK(u2->settings->root_login == permit_root_login::forced_commands_only);
    CHECK(u2->settings->banner == "hello\n");
    CHECK(u2->settings->max_auth_tries == 3);
    CHECK(u2->settings->hostbased_authentication == u.settings->hostbased_authentication);
    CHECK(u2->settings->hostbased_accepted_algorithms == u.settings->hostbased_accepted_algorithms);
    check_exact(encode(u), decode_lookup_user_reply);
    check_exact(encode(lookup_user_reply{}), decode_lookup_user_reply);
    check_exact(encode(lookup_user_request{"alice"}), decode_lookup_user_request);

    check_exact(encode(key_allowed_request{text_bytes("k"), true}), decode_key_allowed_request);
    check_exact(encode(key_allowed_reply{true, true}), decode_key_allowed_reply);
    check_exact(encode(host_allowed_request{text_bytes("k"), "client.example.", "alice"}),
                decode_host_allowed_request);
    check_exact(encode_verdict(monitor_type::host_allowed, true),
                [](byte_span m) { return decode_verdict(monitor_type::host_allowed, m); });
    check_exact(encode(verify_pubkey_request{text_bytes("k"), "ssh-ed25519", bytes(100, 1), bytes(83, 2)}),
                decode_verify_pubkey_request);
    check_exact(encode(moduli_request{2048, 3072, 8192}), decode_moduli_request);
    auto mq = decode_moduli_request(encode(moduli_request{2048, 3072, 8192}));
    REQUIRE(mq);
    CHECK(mq->min_bits == 2048);
    CHECK(mq->preferred_bits == 3072);
    CHECK(mq->max_bits == 8192);
    check_exact(encode(moduli_reply{true, modp_group14()}), decode_moduli_reply);
    check_exact(encode(moduli_reply{}), decode_moduli_reply);
    auto mr = decode_moduli_reply(encode(moduli_reply{true, modp_group14()}));
    REQUIRE(mr);
    CHECK(mr->ok);
    CHECK(mr->group.p == modp_group14().p);
    CHECK(mr->group.g == modp_group14().g);

    password_request p;
    p.password = secret_bytes(as_bytes("hunter2"));
    auto p2 = decode_password_request(encode(p));
    REQUIRE(p2);
    CHECK(as_string_view(p2->password.span()) == "hunter2");
    check_exact(encode(p), decode_password_request);

    check_exact(encode(kbdint_start_request{"pam"}), decode_kbdint_start_request);
    kbdint_respond_request r;
    r.responses.emplace_back(as_bytes("a"));
    r.responses.emplace_back(as_bytes(""));
    auto r2 = decode_kbdint_respond_request(encode(r));
    REQUIRE(r2);
    REQUIRE(r2->responses.size() == 2);
    CHECK(as_string_view(r2->responses[0].span()) == "a");
    check_exact(encode(r), decode_kbdint_respond_request);

    kbdint_reply k;
    k.result = kbdint_reply::kind::prompts;
    k.instruction = "say";
    k.prompts = {{"Password: ", false}, {"Code: ", true}};
    auto k2 = decode_kbdint_reply(monitor_type::kbdint_respond, encode_kbdint_reply(monitor_type::kbdint_respond, k));
    REQUIRE(k2);
    CHECK(k2->prompts == k.prompts);
    CHECK(k2->instruction == "say");
    // A reply to the other request is not this one's.
    CHECK_FALSE(decode_kbdint_reply(monitor_type::kbdint_start, encode_kbdint_reply(monitor_type::kbdint_respond, k)));

    check_exact(encode(account_reply{false, "no"}), decode_account_reply);
    check_exact(encode(log_request{log_level::verbose, "line"}), decode_log_request);
    check_exact(encode(authenticated_request{bytes(1000, 9)}), decode_authenticated_request);
    auto v = [](byte_span m) { return decode_verdict(monitor_type::password, m); };
    check_exact(encode_verdict(monitor_type::password, true), v);
    CHECK(*decode_verdict(monitor_type::password, encode_verdict(monitor_type::password, true)));
    CHECK_FALSE(*decode_verdict(monitor_type::password, encode_verdict(monitor_type::password, false)));
    check_exact(encode(pty_reply{true, "/dev/pts/7"}), decode_pty_reply);
    CHECK(decode_pty_reply(encode(pty_reply{true, "/dev/pts/7"}))->name == "/dev/pts/7");
    CHECK_FALSE(decode_pty_reply(encode(pty_reply{true, std::string("/dev/pts/7\0x", 12)})));
    CHECK_FALSE(decode_pty_reply(encode(pty_reply{true, std::string(257, 'p')})));
    const std::string last = "Last login: Fri Dec  4 23:14:45 2026 from 127.0.0.1\r\n";
    check_exact(encode(pty_reply{true, "/dev/pts/7", last}), decode_pty_reply);
    CHECK(decode_pty_reply(encode(pty_reply{true, "/dev/pts/7", last}))->login_message == last);
    CHECK_FALSE(decode_pty_reply(encode(pty_reply{true, "/dev/pts/7", std::string(513, 'x')})));
    check_exact(encode(pty_release_request{"/dev/pts/7"}), decode_pty_release_request);
    CHECK(decode_pty_release_request(encode(pty_release_request{"/dev/pts/7"}))->name == "/dev/pts/7");
    CHECK_FALSE(decode_pty_release_request(encode(pty_release_request{std::string("/dev/\0", 6)})));
    CHECK_FALSE(decode_pty_release_request(encode(pty_release_request{std::string(257, 'p')})));
    CHECK(decode_empty(monitor_type::max_tries, encode_empty(monitor_type::max_tries)));
    CHECK_FALSE(decode_empty(monitor_type::max_tries, encode_empty(monitor_type::kbdint_abort)));
}

TEST_CASE("monitor messages: types, replies and bounds from a hostile child are refused")
{
    CHECK(message_type(encode(lookup_user_request{"a"}), false) == monitor_type::lookup_user);
    CHECK_FALSE(message_type(encode(lookup_user_request{"a"}), true));
    CHECK(message_type(encode(sign_reply{}), true) == monitor_type::sign);
    CHECK_FALSE(message_type(bytes{}, false));
    CHECK_FALSE(message_type(bytes{0}, false));
    CHECK(message_type(encode_empty(monitor_type::pty), false) == monitor_type::pty);
    CHECK(message_type(encode(pty_release_request{"/dev/pts/1"}), false) == monitor_type::pty_release);
    CHECK(message_type(encode(host_allowed_request{text_bytes("k"), "h", "u"}), false) == monitor_type::host_allowed);
    CHECK(message_type(encode(moduli_request{2048, 2048, 2048}), false) == monitor_type::moduli);
    CHECK(message_type(encode(moduli_reply{}), true) == monitor_type::moduli);
    CHECK_FALSE(message_type(bytes{17}, false));
    CHECK_FALSE(message_type(bytes{0xff}, true));

    // A request decoded as the wrong type.
    CHECK_FALSE(decode_sign_request(encode(lookup_user_request{"a"})));
    // Over-long fields: a host key signature over more than a hash, a user
    // name past a packet, a key blob past 16 KiB, a log line past 8 KiB.
    // (A long user name within a packet is the monitor's to call invalid.)
    CHECK_FALSE(decode_sign_request(encode(sign_request{text_bytes("b"), "ssh-ed25519", bytes(65, 0)})));
    CHECK(decode_lookup_user_request(encode(lookup_user_request{std::string(300, 'u')})));
    CHECK_FALSE(decode_lookup_user_request(encode(lookup_user_request{std::string(max_wire_string + 1, 'u')})));
    // NUL inside a name or a log line: C code would read it shorter.
    CHECK_FALSE(decode_lookup_user_request(encode(lookup_user_request{std::string("root\0junk", 9)})));
    CHECK_FALSE(decode_log_request(encode(log_request{log_level::info, std::string("a\0b", 3)})));
    // (A key blob may be a user certificate: up to max_certificate_blob.)
    CHECK(decode_key_allowed_request(encode(key_allowed_request{bytes(max_certificate_blob, 1), false})));
    CHECK_FALSE(decode_key_allowed_request(encode(key_allowed_request{bytes(max_certificate_blob + 1, 1), false})));
    CHECK_FALSE(decode_log_request(encode(log_request{log_level::info, std::string(8193, 'x')})));
    // A hostbased request's names: as long as the machine lets through, no
    // longer, and no NUL.
    CHECK(decode_host_allowed_request(
        encode(host_allowed_request{text_bytes("k"), std::string(max_hostbased_name, 'h'), "alice"})));
    CHECK_FALSE(decode_host_allowed_request(
        encode(host_allowed_request{text_bytes("k"), std::string(max_hostbased_name + 1, 'h'), "alice"})));
    CHECK_FALSE(decode_host_allowed_request(encode(host_allowed_request{text_bytes("k"), "h", std::string("a\0b", 3)})));
    // A group from the monitor: an 8192-bit prime (with its sign byte) and
    // no more; a short or padded request.
    CHECK(decode_moduli_reply(encode(moduli_reply{true, {bytes(1025, 0xff), bytes{2}}})));
    CHECK_FALSE(decode_moduli_reply(encode(moduli_reply{true, {bytes(1026, 0xff), bytes{2}}})));
    CHECK_FALSE(decode_moduli_reply(encode(moduli_reply{true, {bytes{7}, bytes(1026, 2)}})));
    // Sizes an exchange's clamp would not leave: the monitor refuses them.
    CHECK(is_clamped(moduli_request{2048, 3072, 8192}));
    CHECK(is_clamped(moduli_request{8192, 8192, 8192}));
    CHECK_FALSE(is_clamped(moduli_request{1024, 2048, 8192}));
    CHECK_FALSE(is_clamped(moduli_request{2048, 3072, 16384}));
    CHECK_FALSE(is_clamped(moduli_request{3072, 2048, 8192}));
    CHECK_FALSE(is_clamped(moduli_request{2048, 8192, 4096}));
    bytes short_request = encode(moduli_request{2048, 2048, 2048});
    short_request.pop_back();
    CHECK_FALSE(decode_moduli_request(short_request));
    bytes long_request = encode(moduli_request{2048, 2048, 2048});
    long_request.push_back(0);
    CHECK_FALSE(decode_moduli_request(long_request));
    bytes bad_flag = encode(moduli_reply{});
    bad_flag[1] = 2;
    CHECK_FALSE(decode_moduli_reply(bad_flag));
    // Levels and enums out of range.
    bytes quiet = encode(log_request{log_level::info, "x"});
    quiet[1] = static_cast<std::uint8_t>(log_level::quiet);
    CHECK_FALSE(decode_log_request(quiet));
    bytes high = encode(log_request{log_level::info, "x"});
    high[1] = 42;
    CHECK_FALSE(decode_log_request(high));
    lookup_user_reply u;
    u.settings = server_auth_settings{};
    bytes bad_status = encode(u);
    bad_status[1] = 9;
    CHECK_FALSE(decode_lookup_user_reply(bad_status));
    // Flags are 0 or 1, nothing else.
    bytes two = encode(key_allowed_reply{true, false});
    two[1] = 2;
    CHECK_FALSE(decode_key_allowed_reply(two));
    // More kbdint responses than any prompt list has.
    bytes many;
    many.push_back(static_cast<std::uint8_t>(monitor_type::kbdint_respond));
    wire_writer(many).u32(101);
    CHECK_FALSE(decode_kbdint_respond_request(many));
    bytes huge_count;
    huge_count.push_back(static_cast<std::uint8_t>(monitor_type::kbdint_respond));
    wire_writer(huge_count).u32(0xffffffff);
    CHECK_FALSE(decode_kbdint_respond_request(huge_count));
}

TEST_CASE("monitor channel: whole messages, EOF, deadline and oversized datagrams")
{
    auto pair = make_monitor_socketpair();
    REQUIRE(pair);
    monitor_channel a(pair->monitor_end);
    monitor_channel b(pair->child_end);
    const bytes m1 = encode(lookup_user_request{"alice"});
    const bytes m2 = encode_empty(monitor_type::max_tries);
    REQUIRE(b.send(m1));
    REQUIRE(b.send(m2));
    auto r1 = a.receive();
    auto r2 = a.receive();
    REQUIRE(r1);
    REQUIRE(r2);
    CHECK(*r1 == m1);
    CHECK(*r2 == m2);

    const auto t0 = std::chrono::steady_clock::now();
    auto none = a.receive(t0 + std::chrono::milliseconds(50));
    CHECK(none.error() == errc::timeout);
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(50));

    // The largest message goes through whole (the pair's buffers are
    // sized for it; without root the kernel's cap may be lower).
    const bytes largest(max_monitor_message, 3);
    if (geteuid() == 0) {
        REQUIRE(b.send(largest));
        auto got = a.receive();
        REQUIRE(got);
        CHECK(*got == largest);
        // One byte more is refused by the receiver rather than read cut short.
        bytes big(max_monitor_message + 1, 1);
        REQUIRE(::send(b.fd(), big.data(), big.size(), 0) == static_cast<ssize_t>(big.size()));
        CHECK(a.receive().error() == errc::too_large);
    }

    // A peer that never reads: sending stops at the deadline, never blocks.
    const bytes chunk(64 * 1024, 5);
    result<void> sent;
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000 && sent; ++i)
        sent = a.send(chunk, std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    CHECK(sent.error() == errc::timeout);
    CHECK(std::chrono::steady_clock::now() - t1 < std::chrono::seconds(10));

    b.close();
    CHECK(a.receive().error() == errc::connection_closed);
    CHECK(a.send(m1).error() == errc::connection_closed);
}

namespace {

int open_fd_count()
{
    int n = 0;
    for (int fd = 0; fd < 1024; ++fd)
        if (::fcntl(fd, F_GETFD) != -1)
            ++n;
    return n;
}

} // namespace

TEST_CASE("monitor channel: descriptors go with a message only where the receiver takes them")
{
    auto pair = make_monitor_socketpair();
    REQUIRE(pair);
    monitor_channel parent(pair->monitor_end);
    monitor_channel user(pair->child_end);
    int p[2];
    REQUIRE(::pipe(p) == 0);
    const bytes answer = encode(pty_reply{true, "/dev/pts/1"});

    // Taken: both arrive, close-on-exec, and are the same pipe.
    REQUIRE(parent.send_with_fds(answer, {p[0], p[1]}));
    std::vector<int> fds;
    auto got = user.receive_with_fds(fds, max_passed_fds);
    REQUIRE(got);
    CHECK(*got == answer);
    REQUIRE(fds.size() == 2);
    CHECK((::fcntl(fds[0], F_GETFD) & FD_CLOEXEC) != 0);
    REQUIRE(::write(fds[1], "x", 1) == 1);
    char c = 0;
    REQUIRE(::read(p[0], &c, 1) == 1);
    CHECK(c == 'x');
    for (int fd : fds)
        ::close(fd);

    // A receiver that takes none (the root parent reading the user's
    // process): the message arrives, the descriptors are closed.
    const int before = open_fd_count();
    REQUIRE(user.send_with_fds(answer, {p[0], p[1]}));
    got = parent.receive();
    REQUIRE(got);
    CHECK(*got == answer);
    CHECK(open_fd_count() == before);

    // More than asked for: refused, and none left open.
    REQUIRE(parent.send_with_fds(answer, {p[0], p[1]}));
    fds.clear();
    CHECK(user.receive_with_fds(fds, 1).error() == errc::malformed);
    CHECK(fds.empty());
    CHECK(open_fd_count() == before);
    CHECK_FALSE(parent.send_with_fds(answer, {}));
    CHECK_FALSE(parent.send_with_fds(answer, {p[0], p[1], p[0]}));
    ::close(p[0]);
    ::close(p[1]);
}
