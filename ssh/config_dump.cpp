// `ssh -G`: the effective configuration as lowercase "keyword value" lines
// in the order and formats of OpenSSH 9.2's dump_client_config() (Debian's
// build, which adds the GSSAPI lines).
#include "ssh/ssh_config.hpp"

#include "channel/window_policy.hpp"
#include "common/physical_memory.hpp"
#include "common/text_parse.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/detail/config_values.hpp"

#include <cstdio>

namespace longhaul {

namespace {

using namespace detail;

class dumper {
public:
    void line(std::string_view keyword, std::string_view value)
    {
        out_.append(keyword).push_back(' ');
        out_.append(value).push_back('\n');
    }
    void string(std::string_view keyword, const std::optional<std::string>& v)
    {
        if (v)
            line(keyword, *v);
    }
    void yes_no(std::string_view keyword, const std::optional<bool>& v)
    {
        line(keyword, !v ? "unset" : *v ? "yes" : "no");
    }
    template <class T>
    void state(std::string_view keyword, const std::optional<T>& v, std::span<const state_word<T>> words)
    {
        line(keyword, v ? format_word(words, *v) : std::string_view("unset"));
    }
    void integer(std::string_view keyword, const std::optional<int>& v) { line(keyword, std::to_string(v.value_or(-1))); }
    void strings(std::string_view keyword, const std::vector<std::string>& v)
    {
        for (const auto& s : v)
            line(keyword, s);
    }
    void one_line(std::string_view keyword, const std::vector<std::string>& v)
    {
        out_.append(keyword);
        if (v.empty())
            out_.append(" none");
        for (const auto& s : v)
            out_.append(" ").append(s);
        out_.push_back('\n');
    }
    // LocalForward / RemoteForward / DynamicForward, with OpenSSH's choice of
    // which list entries each keyword shows.
    void forwards(std::string_view keyword, const std::vector<forward_spec>& list)
    {
        const bool dynamic = keyword == "dynamicforward";
        const bool local = keyword == "localforward";
        for (const auto& f : list) {
            if (dynamic && f.connect_host && *f.connect_host != "socks")
                continue;
            if (local && f.connect_host && *f.connect_host == "socks")
                continue;
            out_.append(keyword);
            out_.append(" ").append(endpoint(f.listen_port, f.listen_host, f.listen_path));
            if (!dynamic)
                out_.append(" ").append(endpoint(f.connect_port, f.connect_host, f.connect_path));
            out_.push_back('\n');
        }
    }
    std::string take() { return std::move(out_); }

private:
    static std::string endpoint(int port, const std::optional<std::string>& host, const std::optional<std::string>& path)
    {
        if (port == port_streamlocal)
            return path.value_or("(null)");
        if (!host)
            return std::to_string(port);
        return "[" + *host + "]:" + std::to_string(port);
    }

    std::string out_;
};

std::string octal(unsigned v)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "0%o", v);
    return buf;
}

} // namespace

std::string dump_config(const client_config& o)
{
    dumper d;
    d.line("host", o.host_arg);
    d.string("user", o.user);
    d.string("hostname", o.hostname);
    d.integer("port", o.port);

    d.state("addressfamily", o.address_family, address_family_words());
    d.yes_no("batchmode", o.batch_mode);
    d.yes_no("canonicalizefallbacklocal", o.canonicalize_fallback_local);
    d.state("canonicalizehostname", o.canonicalize_hostname, canonicalize_words());
    d.yes_no("checkhostip", o.check_host_ip);
    d.yes_no("compression", o.compression);
    d.state("controlmaster", o.control_master, control_master_words());
    d.yes_no("enablesshkeysign", o.enable_ssh_keysign);
    d.yes_no("clearallforwardings", o.clear_all_forwardings);
    d.yes_no("exitonforwardfailure", o.exit_on_forward_failure);
    d.state("fingerprinthash", o.fingerprint_hash, fingerprint_hash_words());
    d.yes_no("forwardx11", o.forward_x11);
    d.yes_no("forwardx11trusted", o.forward_x11_trusted);
    d.yes_no("gatewayports", o.gateway_ports);
    d.yes_no("gssapiauthentication", o.gssapi_authentication);
    d.yes_no("gssapikeyexchange", o.gssapi_key_exchange);
    d.yes_no("gssapidelegatecredentials", o.gssapi_delegate_credentials);
    d.yes_no("gssapitrustdns", o.gssapi_trust_dns);
    d.yes_no("gssapirenewalforcesrekey", o.gssapi_renewal_forces_rekey);
    d.yes_no("hashknownhosts", o.hash_known_hosts);
    d.yes_no("hostbasedauthentication", o.hostbased_authentication);
    d.yes_no("identitiesonly", o.identities_only);
    d.yes_no("kbdinteractiveauthentication", o.kbd_interactive_authentication);
    d.yes_no("nohostauthenticationforlocalhost", o.no_host_authentication_for_localhost);
    d.yes_no("passwordauthentication", o.password_authentication);
    d.yes_no("permitlocalcommand", o.permit_local_command);
    d.yes_no("proxyusefdpass", o.proxy_use_fdpass);
    d.state("pubkeyauthentication", o.pubkey_authentication, pubkey_auth_words());
    d.state("requesttty", o.request_tty, request_tty_words());
    d.state("sessiontype", o.session_type, session_type_words());
    d.yes_no("stdinnull", o.stdin_null);
    d.yes_no("forkafterauthentication", o.fork_after_authentication);
    d.yes_no("streamlocalbindunlink", o.stream_local_bind_unlink);
    d.state("stricthostkeychecking", o.strict_host_key_checking, strict_host_key_words());
    d.yes_no("tcpkeepalive", o.tcp_keep_alive);
    d.state("tunnel", o.tunnel, tunnel_words());
    d.state("verifyhostkeydns", o.verify_host_key_dns, yes_no_ask_words());
    d.yes_no("visualhostkey", o.visual_host_key);
    d.state("updatehostkeys", o.update_hostkeys, yes_no_ask_words());
    d.yes_no("enableescapecommandline", o.enable_escape_commandline);

    d.integer("canonicalizemaxdots", o.canonicalize_max_dots);
    d.integer("connectionattempts", o.connection_attempts);
    d.integer("forwardx11timeout", o.forward_x11_timeout);
    d.integer("numberofpasswordprompts", o.number_of_password_prompts);
    d.integer("serveralivecountmax", o.server_alive_count_max);
    d.integer("serveraliveinterval", o.server_alive_interval);
    d.integer("requiredrsasize", o.required_rsa_size);

    d.string("bindaddress", o.bind_address);
    d.string("bindinterface", o.bind_interface);
    d.string("ciphers", o.ciphers);
    d.string("controlpath", o.control_path);
    d.line("hostkeyalgorithms", o.host_key_algorithms.value_or(default_client_host_key_algorithms()));
    d.string("hostkeyalias", o.host_key_alias);
    d.string("hostbasedacceptedalgorithms", o.hostbased_accepted_algorithms);
    d.string("identityagent", o.identity_agent);
    d.string("ignoreunknown", o.ignore_unknown);
    d.string("kbdinteractivedevices", o.kbd_interactive_devices);
    d.string("kexalgorithms", o.kex_algorithms);
    d.string("casignaturealgorithms", o.ca_signature_algorithms);
    d.string("localcommand", o.local_command);
    d.string("remotecommand", o.remote_command);
    // OpenSSH prints the first name of a level: "SILENT" for QUIET, "DEBUG" for DEBUG1.
    const auto level = o.log_level.value_or(log_level::info);
    d.line("loglevel", level == log_level::debug1  ? std::string_view("DEBUG")
                       : level == log_level::quiet ? std::string_view("SILENT")
                                                   : log_level_name(level));
    d.string("macs", o.macs);
    d.string("pkcs11provider", o.pkcs11_provider);
    d.string("securitykeyprovider", o.security_key_provider);
    d.string("preferredauthentications", o.preferred_authentications);
    d.string("pubkeyacceptedalgorithms", o.pubkey_accepted_algorithms);
    d.string("revokedhostkeys", o.revoked_host_keys);
    d.string("xauthlocation", o.xauth_location);
    d.string("knownhostscommand", o.known_hosts_command);

    d.forwards("dynamicforward", o.local_forwards);
    d.forwards("localforward", o.local_forwards);
    d.forwards("remoteforward", o.remote_forwards);

    for (const auto& f : o.identity_files)
        d.line("identityfile", f.path);
    d.one_line("canonicaldomains", o.canonical_domains);
    for (const auto& f : o.certificate_files)
        d.line("certificatefile", f.path);
    d.one_line("globalknownhostsfile", o.global_known_hosts_files);
    d.one_line("userknownhostsfile", o.user_known_hosts_files);
    d.strings("sendenv", o.send_env);
    d.strings("setenv", o.set_env);
    d.one_line("logverbose", o.log_verbose);

    if (o.permit_remote_open.empty())
        d.line("permitremoteopen", "any");
    else
        d.one_line("permitremoteopen", o.permit_remote_open);

    const auto add_keys = o.add_keys_to_agent.value_or(add_keys_to_agent::no);
    if (o.add_keys_to_agent_lifespan <= 0)
        d.state("addkeystoagent", o.add_keys_to_agent, add_keys_words());
    else
        d.line(add_keys == add_keys_to_agent::confirm ? "addkeystoagent confirm" : "addkeystoagent",
               std::to_string(o.add_keys_to_agent_lifespan));

    if (o.forward_agent_sock_path)
        d.line("forwardagent", *o.forward_agent_sock_path);
    else
        d.yes_no("forwardagent", o.forward_agent);

    if (o.connect_timeout.value_or(-1) == -1)
        d.line("connecttimeout", "none");
    else
        d.integer("connecttimeout", o.connect_timeout);

    const int tl = o.tunnel_local.value_or(tun_id_any), tr = o.tunnel_remote.value_or(tun_id_any);
    d.line("tunneldevice", (tl == tun_id_any ? std::string("any") : std::to_string(tl)) + ":" +
                               (tr == tun_id_any ? std::string("any") : std::to_string(tr)));

    std::vector<std::string> cnames;
    for (const auto& r : o.canonicalize_permitted_cnames)
        cnames.push_back(r.source_list + ":" + r.target_list);
    d.one_line("canonicalizePermittedcnames", cnames);

    if (!o.control_persist.value_or(false) || o.control_persist_timeout == 0)
        d.yes_no("controlpersist", o.control_persist);
    else
        d.line("controlpersist", std::to_string(o.control_persist_timeout));

    d.line("escapechar", format_escape_char(o.escape_char.value_or('~')));
    d.line("ipqos", ipqos_name(o.ip_qos_interactive.value_or(0x10)) + " " + ipqos_name(o.ip_qos_bulk.value_or(0x08)));
    d.line("rekeylimit", std::to_string(static_cast<unsigned long long>(o.rekey_limit.value_or(0))) + " " +
                             std::to_string(o.rekey_interval.value_or(0)));
    d.line("streamlocalbindmask", octal(o.stream_local_bind_mask.value_or(0177)));
    d.line("syslogfacility", o.log_facility.value_or("USER"));

    if (!o.jump_host) {
        d.string("proxycommand", o.proxy_command);
    } else {
        // Numeric addresses are bracketed so the port stays unambiguous.
        const std::string& h = *o.jump_host;
        const bool numeric = h.find(':') != std::string::npos || h.find_first_not_of("1234567890.") == std::string::npos;
        std::string v;
        if (o.jump_extra)
            v += *o.jump_extra + ",";
        if (o.jump_user)
            v += *o.jump_user + "@";
        v += numeric ? "[" + h + "]" : h;
        if (o.jump_port.value_or(-1) > 0)
            v += ":" + std::to_string(*o.jump_port);
        d.line("proxyjump", v);
    }
    // Longhaul's own keywords last, so the lines before them stay OpenSSH's.
    const window_config window = window_limits(o.channel_window_max.value_or(0), o.connection_window_max.value_or(0),
                                               physical_memory_bytes());
    d.line("channelwindowmax", std::to_string(window.max_window));
    d.line("connectionwindowmax", std::to_string(window.budget));
    d.yes_no("metrics", o.metrics.value_or(false));
    d.line("metricspath", o.metrics_path.value_or(default_metrics_path));
    d.line("metricsinterval", std::to_string(o.metrics_interval.value_or(1)));
    const int crypto_threads = o.crypto_threads.value_or(-1);
    d.line("cryptothreads", crypto_threads < 0 ? std::string("auto") : std::to_string(crypto_threads));
    return d.take();
}

} // namespace longhaul
