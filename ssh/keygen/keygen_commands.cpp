#include "ssh/keygen/keygen_commands.hpp"


#include "common/file_read.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/krl.hpp"
#include "common/keys/revocation.hpp"
#include "common/keys/revocation_file.hpp"
#include "common/temp_name.hpp"
#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_files.hpp"
#include "ssh/keygen/keygen_krl.hpp"
#include "ssh/keygen/keygen_sk.hpp"

#include <fcntl.h>
#include <openssl/encoder.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace longhaul {

using namespace keygen;

int keygen_generate(const keygen_options& o)
{
    const type_choice t = choose_type(o);
    const auto u = me();
    // A security key's -O options are read before anything is printed.
    std::optional<sk_generation> sk;
    if (is_security_key(t.type))
        sk = parse_sk_generation_options(t.type, o.generate_options);
    if (!o.quiet)
        std::printf("Generating public/private %s key pair.\n", t.name.c_str());
    std::fflush(stdout);
    // Either a private key, or a security key's record: the authenticator
    // keeps the private half.
    std::optional<private_key> key;
    std::optional<sk_enrolled> enrolled;
    if (sk) {
        enrolled = enroll_security_key(*sk, o);
    } else {
        auto generated = private_key::generate(t.type, t.bits);
        if (!generated)
            fatal("sshkey_generate failed");
        key.emplace(std::move(*generated));
    }
    const public_key pub = key ? key->public_part() : enrolled->record.key;
    std::string path;
    if (o.file) {
        path = *o.file;
    } else {
        const std::string dir = u.home + "/.ssh";
        path = ask_filename("Enter file in which to save the key", dir + "/" + t.default_file);
        // Create ~/.ssh for a key saved there.
        struct stat st {};
        if (path.rfind(dir + "/", 0) == 0 && ::stat(dir.c_str(), &st) == -1 && errno == ENOENT) {
            if (::mkdir(dir.c_str(), 0700) == 0) {
                if (!o.quiet)
                    std::printf("Created directory '%s'.\n", dir.c_str());
            }
        }
    }
    if (!confirm_overwrite(path))
        throw keygen_exit(1, "");
    std::string passphrase = private_key_passphrase(o);
    const std::string comment = o.comment ? *o.comment : u.name + "@" + hostname();
    std::optional<std::string> failure;
    if (key) {
        key->set_comment(comment);
        failure = save_private(*key, path, passphrase, o);
    } else {
        enrolled->record.comment = comment;
        failure = save_security_key(enrolled->record, path, passphrase, o);
    }
    std::fill(passphrase.begin(), passphrase.end(), '\0');
    if (failure)
        throw keygen_exit(1, "Saving key \"" + path + "\" failed: " + *failure);
    if (!o.quiet)
        std::printf("Your identification has been saved in %s\n", path.c_str());
    const std::string pub_path = path + ".pub";
    if (auto e = save_public(pub, pub_path, comment))
        fatal("Unable to save public key to " + pub_path + ": " + *e);
    if (!o.quiet) {
        std::printf("Your public key has been saved in %s\n", pub_path.c_str());
        std::printf("The key fingerprint is:\n");
        std::printf("%s %s\n", key_fingerprint(pub, o.hash).c_str(), comment.c_str());
        std::printf("The key's randomart image is:\n");
        std::printf("%s\n", key_randomart(pub, o.hash).c_str());
    }
    if (enrolled && sk->attestation_path)
        save_attestation(enrolled->attestation, *sk->attestation_path, o.quiet);
    return 0;
}

int keygen_host_keys(const keygen_options& o)
{
    struct host_key {
        const char* type;
        const char* display;
        const char* path;
    };
    static constexpr host_key types[] = {
        {"rsa", "RSA", "/etc/ssh/ssh_host_rsa_key"},
        {"ecdsa", "ECDSA", "/etc/ssh/ssh_host_ecdsa_key"},
        {"ed25519", "ED25519", "/etc/ssh/ssh_host_ed25519_key"},
    };
    const std::string prefix = o.file.value_or("");
    const auto u = me();
    const std::string comment = u.name + "@" + hostname();
    bool first = false;
    for (const auto& h : types) {
        const std::string prv = prefix + h.path;
        struct stat st {};
        if (::stat(prv.c_str(), &st) == 0) {
            if (st.st_size != 0)
                continue; // present: keep it
        } else if (errno != ENOENT) {
            std::fprintf(stderr, "Could not stat %s: %s\r\n", h.path, std::strerror(errno));
            first = false;
            continue;
        }
        // Temporary names first, then rename: a crash never leaves half a key.
        std::string prv_tmp = fill_temp_template(prv + ".XXXXXXXXXX");
        std::string pub_tmp = fill_temp_template(prv + ".pub.XXXXXXXXXX");
        const std::string pub = prv + ".pub";
        if (!first) {
            first = true;
            std::printf("%s: generating new host keys: ", progname);
        }
        std::printf("%s ", h.display);
        std::fflush(stdout);
        int fd = ::mkstemp(prv_tmp.data());
        if (fd == -1) {
            std::fprintf(stderr, "Could not save your private key in %s: %s\r\n", prv_tmp.c_str(), std::strerror(errno));
            first = false;
            continue;
        }
        ::close(fd);
        keygen_options ko = o;
        ko.key_type = h.type;
        ko.bits = 0;
        const type_choice t = choose_type(ko);
        auto key = private_key::generate(t.type, t.bits);
        if (!key) {
            std::fprintf(stderr, "sshkey_generate failed\r\n");
            ::unlink(prv_tmp.c_str());
            first = false;
            continue;
        }
        key->set_comment(comment);
        if (auto e = save_private(*key, prv_tmp, "", ko)) {
            std::fprintf(stderr, "Saving key \"%s\" failed: %s\r\n", prv_tmp.c_str(), e->c_str());
            ::unlink(prv_tmp.c_str());
            first = false;
            continue;
        }
        fd = ::mkstemp(pub_tmp.data());
        if (fd == -1) {
            std::fprintf(stderr, "Could not save your public key to %s: %s\r\n", pub_tmp.c_str(), std::strerror(errno));
            ::unlink(prv_tmp.c_str());
            first = false;
            continue;
        }
        (void)::fchmod(fd, 0644);
        ::close(fd);
        if (auto e = save_public(key->public_part(), pub_tmp, comment)) {
            std::fprintf(stderr, "Unable to save public key to %s: %s\r\n", prefix.c_str(), e->c_str());
            ::unlink(prv_tmp.c_str());
            ::unlink(pub_tmp.c_str());
            first = false;
            continue;
        }
        if (::rename(pub_tmp.c_str(), pub.c_str()) != 0) {
            std::fprintf(stderr, "Unable to move %s into position: %s\r\n", pub.c_str(), std::strerror(errno));
            first = false;
            continue;
        }
        if (::rename(prv_tmp.c_str(), prv.c_str()) != 0) {
            std::fprintf(stderr, "Unable to move %s into position: %s\r\n", h.path, std::strerror(errno));
            first = false;
            continue;
        }
    }
    if (first)
        std::printf("\n");
    return 0;
}

int keygen_fingerprint(const keygen_options& o)
{
    const std::string file = identity_or_ask(o, nullptr);
    std::string text, path = file;
    if (file == "-") {
        path = "(stdin)";
        int c;
        while ((c = std::fgetc(stdin)) != EOF)
            text.push_back(static_cast<char>(c));
    } else {
        int e = 0;
        std::ifstream probe(file, std::ios::binary);
        if (!probe)
            fatal(std::string(progname) + ": " + file + ": " + std::strerror(errno));
        text = read_whole_file(file, e);
    }
    bool any = false;
    std::string_view rest = text;
    std::size_t line_number = 0;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        ++line_number;
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        if (line.empty() || line[0] == '#')
            continue;
        if (line_number == 1 && file != "-" && line.find("PRIVATE KEY") != std::string_view::npos) {
            fingerprint_private(file, o);
            return 0;
        }
        // A plain key, or one after an authorized_keys options field or a
        // known_hosts host list (which then stands in for a missing comment).
        std::string_view first;
        auto key = read_key(line);
        if (!key) {
            // A certificate: its key's fingerprint, typed "ED25519-CERT".
            std::string comment;
            if (auto cert = keygen::read_certificate(line, &comment)) {
                keygen::print_certificate_fingerprint(*cert, comment, o);
                any = true;
                continue;
            }
        }
        if (!key) {
            bool quoted = false;
            std::size_t n = 0;
            for (; n < line.size() && (quoted || (line[n] != ' ' && line[n] != '\t')); ++n) {
                if (line[n] == '\\' && n + 1 < line.size() && line[n + 1] == '"')
                    ++n;
                else if (line[n] == '"')
                    quoted = !quoted;
            }
            if (n >= line.size())
                continue;
            first = line.substr(0, n);
            line.remove_prefix(n);
            key = read_key(line);
            if (!key) {
                if (o.verbose) // -v is debug1 in ssh-keygen
                    std::fprintf(stderr, "debug1: %s:%zu: not a public key\r\n", path.c_str(), line_number);
                continue;
            }
        }
        std::string comment;
        if (!line.empty() && line[0] != '#')
            comment = std::string(line);
        else if (!first.empty())
            comment = std::string(first);
        print_fingerprint_line(*key, comment, o);
        any = true;
    }
    if (!any)
        fatal(path + " is not a public key file.");
    return 0;
}

int keygen_print_public(const keygen_options& o)
{
    const std::string file = identity_or_ask(o, nullptr);
    struct stat st {};
    if (::stat(file.c_str(), &st) == -1)
        fatal(file + ": " + std::strerror(errno));
    const identity_public key = load_identity_public(file, o, "Load key");
    std::string line = format_public_key(key.key);
    if (!key.comment.empty())
        line += " " + key.comment;
    std::printf("%s\n", line.c_str());
    return 0;
}

int keygen_change_passphrase(const keygen_options& o)
{
    const std::string file = identity_or_ask(o, nullptr);
    struct stat st {};
    if (::stat(file.c_str(), &st) == -1)
        fatal(file + ": " + std::strerror(errno));
    auto l = load_editable(file, "");
    if (!l.loaded() && (l.error == errc::wrong_passphrase || l.error == errc::passphrase_required)) {
        std::string old = o.old_passphrase ? *o.old_passphrase : read_passphrase("Enter old passphrase: ");
        l = load_editable(file, old);
        std::fill(old.begin(), old.end(), '\0');
    }
    if (!l.loaded())
        fatal("Failed to load key " + file + ": " + load_error_text(l));
    const std::string comment = l.comment();
    std::printf("Key has comment '%s'\n", comment.c_str());
    std::string pass;
    if (o.new_passphrase) {
        pass = *o.new_passphrase;
    } else {
        pass = read_passphrase("Enter new passphrase (empty for no passphrase): ");
        std::string again = read_passphrase("Enter same passphrase again: ");
        if (pass != again) {
            std::fill(pass.begin(), pass.end(), '\0');
            std::fill(again.begin(), again.end(), '\0');
            std::printf("Pass phrases do not match.  Try again.\n");
            throw keygen_exit(1, "");
        }
        std::fill(again.begin(), again.end(), '\0');
    }
    auto failure = save_editable(l, file, comment, pass, o);
    std::fill(pass.begin(), pass.end(), '\0');
    if (failure)
        throw keygen_exit(1, "Saving key \"" + file + "\" failed: " + *failure);
    std::printf("Your identification has been saved with the new passphrase.\n");
    return 0;
}

// do_change_comment
int keygen_change_comment(const keygen_options& o)
{
    const std::string file = identity_or_ask(o, nullptr);
    struct stat st {};
    if (::stat(file.c_str(), &st) == -1)
        fatal(file + ": " + std::strerror(errno));
    std::string pass;
    auto l = load_editable(file, "");
    if (!l.loaded() && l.error != errc::wrong_passphrase && l.error != errc::passphrase_required)
        fatal("Cannot load private key \"" + file + "\": " + load_error_text(l));
    if (!l.loaded()) {
        pass = o.old_passphrase   ? *o.old_passphrase
               : o.new_passphrase ? *o.new_passphrase
                                  : read_passphrase("Enter passphrase: ");
        l = load_editable(file, pass);
        if (!l.loaded()) {
            std::fill(pass.begin(), pass.end(), '\0');
            fatal("Cannot load private key \"" + file + "\": " + load_error_text(l));
        }
    }
    const key_type type = l.public_part().type();
    if (l.key && type != key_type::ed25519 && o.format && *o.format != "OpenSSH" && *o.format != "openssh") {
        std::fill(pass.begin(), pass.end(), '\0');
        throw keygen_exit(1, "Comments are only supported for keys stored in the new format (-o).");
    }
    const std::string old_comment = l.comment();
    if (!old_comment.empty())
        std::printf("Old comment: %s\n", old_comment.c_str());
    else
        std::printf("No existing comment\n");
    std::string comment;
    if (o.comment) {
        comment = *o.comment;
    } else {
        std::printf("New comment: ");
        std::fflush(stdout);
        char line[1024];
        if (!std::fgets(line, sizeof line, stdin)) {
            std::fill(pass.begin(), pass.end(), '\0');
            throw keygen_exit(1, "");
        }
        comment = line;
        comment.resize(comment.find('\n') == std::string::npos ? comment.size() : comment.find('\n'));
    }
    if (!old_comment.empty() && old_comment == comment) {
        std::printf("No change to comment\n");
        std::fill(pass.begin(), pass.end(), '\0');
        return 0;
    }
    auto failure = save_editable(l, file, comment, pass, o);
    std::fill(pass.begin(), pass.end(), '\0');
    if (failure)
        throw keygen_exit(1, "Saving key \"" + file + "\" failed: " + *failure);
    if (auto pub_failure = save_public(l.public_part(), file + ".pub", comment))
        fatal("Unable to save public key to " + file + ".pub: " + *pub_failure);
    if (!comment.empty())
        std::printf("Comment '%s' applied\n", comment.c_str());
    else
        std::printf("Comment removed\n");
    return 0;
}

int keygen_export(const keygen_options& o)
{
    const std::string file = identity_or_ask(o, nullptr);
    struct stat st {};
    if (::stat(file.c_str(), &st) == -1)
        fatal(std::string(progname) + ": " + file + ": " + std::strerror(errno));
    std::optional<public_key> key;
    if (auto p = load_public_key(file))
        key = p->first;
    else
        key = load_identity(file, o, "Load key").public_part();
    const std::string format = o.format.value_or("RFC4716");
    const std::string type(key_type_short_name(key->type()));
    if (format == "RFC4716") {
        const auto u = me();
        std::string comment = std::to_string(key->bits()) + "-bit " + type + ", converted by " + u.name + "@" +
                              hostname() + " from OpenSSH";
        comment = comment.substr(0, 60); // the line must fit in 72 columns
        std::string body;
        const std::string b64 = base64_encode(key->blob());
        for (std::size_t i = 0; i < b64.size(); i += 70)
            body += b64.substr(i, 70) + "\n";
        std::printf("---- BEGIN SSH2 PUBLIC KEY ----\nComment: \"%s\"\n%s---- END SSH2 PUBLIC KEY ----\n",
                    comment.c_str(), body.c_str());
        return 0;
    }
    const bool rsa = key->type() == key_type::rsa;
    // Security keys have no PEM/PKCS#8 form (OpenSSH refuses them too).
    const bool ec = key->type() == key_type::ecdsa_p256 || key->type() == key_type::ecdsa_p384 ||
                    key->type() == key_type::ecdsa_p521;
    if (format == "PKCS8" && !rsa && !ec)
        fatal("do_convert_to_pkcs8: unsupported key type " + type);
    if (format == "PEM" && !rsa && !ec)
        fatal("do_convert_to_pem: unsupported key type " + type);
    // PKCS8: SubjectPublicKeyInfo; PEM: PKCS#1 RSAPublicKey for RSA (the
    // EC form is the SubjectPublicKeyInfo again, as OpenSSH writes it).
    const char* structure = (format == "PEM" && rsa) ? "type-specific" : "SubjectPublicKeyInfo";
    OSSL_ENCODER_CTX* ctx =
        OSSL_ENCODER_CTX_new_for_pkey(key->evp(), EVP_PKEY_PUBLIC_KEY, "PEM", structure, nullptr);
    unsigned char* data = nullptr;
    std::size_t len = 0;
    const bool ok = ctx != nullptr && OSSL_ENCODER_to_data(ctx, &data, &len) == 1;
    OSSL_ENCODER_CTX_free(ctx);
    if (!ok)
        fatal("PEM_write_PUBKEY failed");
    std::fwrite(data, 1, len, stdout);
    OPENSSL_free(data);
    return 0;
}

int keygen_check_krl(const keygen_options& o, const std::vector<std::string>& keys, bool print)
{
    if (!o.file || o.file->empty())
        fatal("KRL checking requires an input file");
    const krl k = keygen::load_krl(*o.file);
    if (print)
        std::fputs(describe_krl(k).c_str(), stdout);

    int status = 0;
    for (const auto& arg : keys) {
        // ssh_krl_check_key: a certificate is revoked by its certified key,
        // its CA's key, or its serial or key ID under that CA.
        bool revoked = false;
        std::string comment;
        if (auto cert = load_certificate_file(arg, comment)) {
            revoked = k.revokes(cert->key()) || k.revokes(cert->signature_key()) || k.revokes_serial_or_id(*cert);
        } else if (auto loaded = load_public_key(arg)) {
            revoked = k.revokes(loaded->first);
            comment = loaded->second;
        } else {
            fatal("Cannot load public key " + arg + ": No such file or directory"); // as OpenSSH says for any failure
        }
        std::printf("%s%s%s%s: %s\n", arg.c_str(), comment.empty() ? "" : " (", comment.c_str(),
                    comment.empty() ? "" : ")", revoked ? "REVOKED" : "ok");
        if (revoked)
            status = 1;
    }
    return status;
}

} // namespace longhaul
