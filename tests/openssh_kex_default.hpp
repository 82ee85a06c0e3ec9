// Longhaul's default key exchange list is OpenSSH 9.2's with
// mlkem768x25519-sha256 in front, as OpenSSH 9.9 put it. The outputs the
// config tests compare with come from OpenSSH 9.2 (Debian 12's `ssh -G`,
// `sshd -T`, and stored copies of them), which predates the method; this
// gives their default list the 9.9 form before the comparison.
#pragma once

#include <string>

namespace longhaul::test {

inline std::string with_openssh99_kex_default(const std::string& kex_list)
{
    // 9.2's default holds its post-quantum sntrup761x25519 pair in front of
    // curve25519 (with ^ or + the list keeps it, after or before the names
    // added); 9.9 put mlkem768x25519-sha256 right before the pair.
    const std::string pq92 = "sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256";
    const auto at = ("," + kex_list).find("," + pq92);
    if (at == std::string::npos || kex_list.find("mlkem768x25519-sha256") != std::string::npos)
        return kex_list;
    return kex_list.substr(0, at) + "mlkem768x25519-sha256," + kex_list.substr(at);
}

} // namespace longhaul::test
