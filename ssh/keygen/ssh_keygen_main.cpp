// ssh-keygen: key generation (-t -b -f -N -C -q -a -m), host keys (-A),
// fingerprints (-l -E -v -B), comments (-c), known_hosts (-F -R -H), public keys (-y), passphrase changes (-p -P -N),
// public key export and import (-e -i -m), SSHFP records (-r -g), KRL generation (-k [-u] [-s ca|none] [-z
// version] [-C comment]) and queries (-Q [-l]), certificate signing
// (-s -I -h -n -V -z -O -U, -t for the CA's signature algorithm) and listing
// (-L), SSHSIG signatures (-Y sign, verify, check-novalidate,
// find-principals, match-principals), moduli for DH group exchange
// (-M generate, -M screen with -O and -f). Other OpenSSH options are refused with a message rather than
// misbehaving.
#include "common/keys/fingerprint.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "common/text_parse.hpp"
#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_commands.hpp"
#include "ssh/keygen/keygen_formats.hpp"
#include "ssh/keygen/keygen_known_hosts.hpp"
#include "ssh/keygen/keygen_krl.hpp"
#include "ssh/keygen/keygen_moduli.hpp"
#include "ssh/keygen/keygen_pkcs11.hpp"
#include "ssh/keygen/keygen_sk.hpp"
#include "ssh/keygen/keygen_sshsig.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace longhaul;

namespace {

void usage()
{
    // Debian's OpenSSH 9.2 usage, but DSA, which this ssh-keygen does not make.
    std::fprintf(stderr,
                 "usage: ssh-keygen [-q] [-a rounds] [-b bits] [-C comment] [-f output_keyfile]\n"
                 "                  [-m format] [-N new_passphrase] [-O option]\n"
                 "                  [-t ecdsa | ecdsa-sk | ed25519 | ed25519-sk | rsa]\n"
                 "                  [-w provider] [-Z cipher]\n"
                 "       ssh-keygen -p [-a rounds] [-f keyfile] [-m format] [-N new_passphrase]\n"
                 "                   [-P old_passphrase] [-Z cipher]\n"
                 "       ssh-keygen -i [-f input_keyfile] [-m key_format]\n"
                 "       ssh-keygen -e [-f input_keyfile] [-m key_format]\n"
                 "       ssh-keygen -y [-f input_keyfile]\n"
                 "       ssh-keygen -c [-a rounds] [-C comment] [-f keyfile] [-P passphrase]\n"
                 "       ssh-keygen -l [-v] [-E fingerprint_hash] [-f input_keyfile]\n"
                 "       ssh-keygen -B [-f input_keyfile]\n"
                 "       ssh-keygen -D pkcs11\n"
                 "       ssh-keygen -F hostname [-lv] [-f known_hosts_file]\n"
                 "       ssh-keygen -H [-f known_hosts_file]\n"
                 "       ssh-keygen -K [-a rounds] [-w provider]\n"
                 "       ssh-keygen -R hostname [-f known_hosts_file]\n"
                 "       ssh-keygen -r hostname [-g] [-f input_keyfile]\n"
                 "       ssh-keygen -M generate [-O option] output_file\n"
                 "       ssh-keygen -M screen [-f input_file] [-O option] output_file\n"
                 "       ssh-keygen -I certificate_identity -s ca_key [-hU] [-D pkcs11_provider]\n"
                 "                  [-n principals] [-O option] [-V validity_interval]\n"
                 "                  [-z serial_number] file ...\n"
                 "       ssh-keygen -L [-f input_keyfile]\n"
                 "       ssh-keygen -A [-a rounds] [-f prefix_path]\n"
                 "       ssh-keygen -k -f krl_file [-u] [-s ca_public] [-z version_number]\n"
                 "                  file ...\n"
                 "       ssh-keygen -Q [-l] -f krl_file [file ...]\n"
                 "       ssh-keygen -Y find-principals -s signature_file -f allowed_signers_file\n"
                 "       ssh-keygen -Y match-principals -I signer_identity -f allowed_signers_file\n"
                 "       ssh-keygen -Y check-novalidate -n namespace -s signature_file\n"
                 "       ssh-keygen -Y sign -f key_file -n namespace file [-O option] ...\n"
                 "       ssh-keygen -Y verify -f allowed_signers_file -I signer_identity\n"
                 "                  -n namespace -s signature_file [-r krl_file] [-O option]\n");
    std::exit(1);
}

} // namespace

int main(int argc, char** argv)
{
    keygen_options o;
    bool gen_all = false, fingerprint = false, print_public = false, change = false, export_key = false;
    bool check_krl = false, show_cert = false;
    bool gen_krl = false, update_krl = false; // -k, -u
    bool change_comment = false;              // -c
    bool download_resident = false;           // -K
    std::optional<std::string> pkcs11_provider; // -D
    bool list_fingerprints = false;             // -l itself (-B sets `fingerprint` too)
    bool import_key = false, generic_dns = false; // -i/-X, -g
    std::optional<std::string> sign_op, revoked; // -Y, -r (with -Y: a KRL)
    std::optional<std::string> moduli_op;        // -M generate | screen
    std::optional<known_hosts_request> known_hosts; // -F, -R, -H
    auto known_hosts_op = [&](known_hosts_action a, const char* host) {
        if (!known_hosts)
            known_hosts.emplace();
        // -H with -F: the lines found, hashed; -F or -R decides the action.
        if (a == known_hosts_action::hash) {
            known_hosts->hash_found = true;
            if (known_hosts->host.empty())
                known_hosts->action = a;
            return;
        }
        known_hosts->action = a;
        known_hosts->host = host;
    };
    std::optional<std::string> ca_key; // -s
    cert_sign_request cert;
    try {
        ::opterr = 0;
        int c;
        // "+": options end at the first operand, as with OpenSSH's own
        // (BSD) getopt, rather than glibc's reordering.
        while ((c = ::getopt(argc, argv, "+:AC:E:N:P:a:b:ef:lm:pqt:vyBD:F:HI:KLM:O:QR:UV:XY:Z:cghikn:or:s:uw:z:")) != -1) {
            switch (c) {
            case 'A': gen_all = true; break;
            case 'C': o.comment = optarg; break;
            case 'E': {
                auto h = parse_fingerprint_hash(optarg);
                if (!h)
                    throw keygen_exit(255, std::string("Invalid hash algorithm \"") + optarg + "\"");
                o.hash = *h;
                break;
            }
            case 'N': o.new_passphrase = optarg; break;
            case 'Z':
                if (!openssh_key_cipher_known(optarg))
                    throw keygen_exit(255, std::string("Invalid OpenSSH-format cipher '") + optarg + "'");
                o.cipher = optarg;
                break;
            case 'P': o.old_passphrase = optarg; break;
            case 'a': {
                const char* why = nullptr;
                o.rounds = static_cast<int>(strtonum(optarg, 1, INT_MAX, why).value_or(0));
                if (why)
                    throw keygen_exit(255, std::string("Invalid number: ") + optarg + " (" + why + ")");
                break;
            }
            case 'b': {
                const char* why = nullptr;
                o.bits = static_cast<int>(strtonum(optarg, 1, 0xffffffffLL, why).value_or(0));
                if (why || o.bits <= 0)
                    throw keygen_exit(255, std::string("Bits has bad value ") + optarg + " (" + (why ? why : "too large") + ")");
                break;
            }
            case 'e': export_key = true; break;
            case 'f': o.file = optarg; break;
            case 'l': fingerprint = true; list_fingerprints = true; break;
            case 'B': fingerprint = true; o.bubblebabble = true; break;
            case 'c': change_comment = true; break;
            case 'i':
            case 'X': import_key = true; break;
            case 'g': generic_dns = true; break;
            case 'o': break; // the OpenSSH format is the default already
            case 'm':
                if (std::strcmp(optarg, "RFC4716") != 0 && std::strcmp(optarg, "PKCS8") != 0 &&
                    std::strcmp(optarg, "PEM") != 0)
                    throw keygen_exit(255, std::string("Unsupported conversion format \"") + optarg + "\"");
                o.format = optarg;
                break;
            case 'p': change = true; break;
            case 'Q': check_krl = true; break;
            case 'k': gen_krl = true; break;
            case 'u': update_krl = true; break;
            case 'Y': sign_op = optarg; break;
            case 'M':
                if (std::strcmp(optarg, "generate") != 0 && std::strcmp(optarg, "screen") != 0)
                    throw keygen_exit(255, std::string("Unsupported moduli option ") + optarg);
                moduli_op = optarg;
                break;
            case 'F': known_hosts_op(known_hosts_action::find, optarg); break;
            case 'R': known_hosts_op(known_hosts_action::remove, optarg); break;
            case 'H': known_hosts_op(known_hosts_action::hash, nullptr); break;
            case 'r': revoked = optarg; break;
            case 'q': o.quiet = true; break;
            case 't': o.key_type = optarg; break;
            case 'v': o.verbose = true; break;
            case 'y': print_public = true; break;
            // Certificates (keygen_cert.hpp); -V and -z are read here, as
            // OpenSSH reads them, and -O is applied after every flag.
            case 's': ca_key = optarg; break;
            case 'I': cert.key_id = optarg; break;
            case 'h': cert.host = true; break;
            case 'n': cert.principals = optarg; break;
            case 'O': cert.options.emplace_back(optarg); break;
            case 'V': cert.validity = keygen::parse_cert_validity(optarg, std::time(nullptr)); break;
            case 'z': cert.serial = keygen::parse_cert_serial(optarg); break;
            case 'L': show_cert = true; break;
            case 'U': cert.ca_in_agent = true; break;
            case 'w': o.sk_provider = optarg; break;
            case 'K': download_resident = true; break;
            case 'D': pkcs11_provider = optarg; break;
            // OpenSSH's lines end in CR LF here (its getopt reports through
            // its log functions).
            case ':':
                std::fprintf(stderr, "option requires an argument -- %c\r\n", optopt);
                usage();
                break;
            case '?':
                std::fprintf(stderr, "unknown option -- %c\r\n", optopt);
                usage();
                break;
            default:
                usage();
            }
        }
        // -Y reads -n (namespace), -I, -s (signature file), -O and -U
        // its own way, as OpenSSH's does, before any other check.
        if (sign_op) {
            sshsig_request y;
            y.operation = *sign_op;
            y.ns = cert.principals;
            y.identity = cert.key_id;
            y.signature = ca_key;
            y.revoked = revoked;
            y.use_agent = cert.ca_in_agent;
            y.options = cert.options;
            y.files.assign(argv + optind, argv + argc);
            const int status = keygen_sshsig(o, y, usage);
            std::fflush(stdout);
            return status;
        }
        if (ca_key) {
            if (optind >= argc && !gen_krl) {
                std::fprintf(stderr, "Too few arguments.\r\n");
                usage();
            }
        } else if (optind < argc && !check_krl && !gen_krl && !moduli_op) {
            std::fprintf(stderr, "Too many arguments.\n");
            usage();
        }
        // The certificate flags (-I, -h, -n, -O, -V, -z) serve -s; elsewhere
        // OpenSSH parses and ignores them, and so does this one. With -k, -s
        // names the CA and -z the KRL's version. -M and -Y take -O for their
        // own options; key generation for a security key's enrolment (and,
        // as OpenSSH, ignores it for other key types).
        const bool generating = !gen_krl && !ca_key && !show_cert && !check_krl && !known_hosts && !fingerprint &&
                                !change && !change_comment && !export_key && !import_key && !print_public &&
                                !revoked && !gen_all && !moduli_op && !pkcs11_provider;
        // -K takes -O device= as generation takes its -O options.
        if (generating || download_resident)
            o.generate_options = cert.options;
        if (change && change_comment) {
            std::fprintf(stderr, "Can only have one of -p and -c.\r\n");
            usage();
        }
        if (known_hosts && fingerprint && known_hosts->action != known_hosts_action::find) {
            std::fprintf(stderr, "Cannot use -l with -H or -R.\r\n");
            usage();
        }
        int status;
        if (gen_krl) {
            krl_generate_request krl;
            krl.ca_path = ca_key;
            krl.update = update_krl;
            krl.version = cert.serial.first;
            krl.files.assign(argv + optind, argv + argc);
            status = keygen_generate_krl(o, krl);
        } else if (ca_key) {
            cert.ca_path = *ca_key;
            cert.pkcs11 = pkcs11_provider;
            cert.files.assign(argv + optind, argv + argc);
            status = keygen_sign(o, cert);
        } else if (show_cert)
            status = keygen_show_certificates(o);
        else if (check_krl)
            status = keygen_check_krl(o, std::vector<std::string>(argv + optind, argv + argc), fingerprint);
        else if (known_hosts) {
            known_hosts->print_fingerprint = fingerprint;
            known_hosts->randomart = o.verbose;
            known_hosts->quiet = o.quiet;
            known_hosts->fingerprint = o.hash;
            status = keygen_known_hosts(o, *known_hosts);
        } else if (pkcs11_provider)
            status = keygen::keygen_download_pkcs11(o, *pkcs11_provider, list_fingerprints);
        else if (fingerprint)
            status = keygen_fingerprint(o);
        else if (change)
            status = keygen_change_passphrase(o);
        else if (change_comment)
            status = keygen_change_comment(o);
        else if (export_key)
            status = keygen_export(o);
        else if (import_key)
            status = keygen_import(o);
        else if (print_public)
            status = keygen_print_public(o);
        else if (revoked) // -r without -Y: the host name for SSHFP records
            status = keygen_dns_records(o, *revoked, generic_dns);
        else if (moduli_op) {
            // -O here is the moduli options, read only now, as OpenSSH's.
            if (optind >= argc)
                throw keygen_exit(255, "No output file specified");
            if (argc - optind > 1)
                throw keygen_exit(255, "Too many output files specified");
            status = *moduli_op == "generate" ? keygen_moduli_generate(o, argv[optind], cert.options)
                                              : keygen_moduli_screen(o, argv[optind], cert.options);
        } else if (download_resident)
            status = keygen::keygen_download_resident(o);
        else if (gen_all)
            status = keygen_host_keys(o);
        else
            status = keygen_generate(o);
        std::fflush(stdout);
        return status;
    } catch (const keygen_exit& e) {
        std::fflush(stdout);
        if (!e.message().empty())
            std::fprintf(stderr, "%s\r\n", e.message().c_str()); // OpenSSH's log lines end in CR LF
        return e.status();
    }
}
