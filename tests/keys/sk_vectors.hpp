// Security-key ("sk") test vectors, made with Debian 12's OpenSSH 9.2p1
// ssh-keygen and a software FIDO provider (keys enrolled with
// `ssh-keygen -t ed25519-sk|ecdsa-sk -w provider.so`, signatures with
// `ssh-keygen -Y sign -n file` over sk_signed_message). Expected values
// (fingerprints, flags, counters) are what Debian's ssh-keygen printed.
#pragma once

#include "common/keys/base64.hpp"
#include "common/keys/public_key.hpp"

#include <doctest/doctest.h>

#include <string_view>

namespace longhaul::test {

// A public key from the base64 of its blob (the vectors below).
inline public_key key_from_base64(std::string_view b64)
{
    auto blob = base64_decode(b64);
    REQUIRE(blob);
    auto key = public_key::from_blob(*blob);
    REQUIRE(key);
    return std::move(*key);
}

// sk-ssh-ed25519@openssh.com, application "ssh:", comment "edk"
inline constexpr std::string_view sk_ed25519_pub =
    "AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIAPbuFTCrdfxdPA9E89KGniddoSxLkgyuQ5fbqkwCSCYAAAABHNzaDo=";
inline constexpr std::string_view sk_ed25519_fp =
    "SHA256:GS7YBn5Luasq2jRcp+SxWHYw+XIjB9lGNxHHblobnS8";
// sk-ecdsa-sha2-nistp256@openssh.com, application "ssh:", comment "eck"
inline constexpr std::string_view sk_ecdsa_pub =
    "AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBPOAR4T9CvZk6YcwGFKVnwSCSraA2n/KeCz/NpRu2tXZhcuTL7Ik58D6G8rb/W3JUfgs1ShBLOPunruRZvm62zYAAAAEc3NoOg==";
inline constexpr std::string_view sk_ecdsa_fp =
    "SHA256:OS1ntT1LA6sGUZYkDUxpxWGiMZ59jZLqUFkknOOtx7o";
inline constexpr std::string_view sk_ecdsa_md5 =
    "MD5:9b:b4:5c:31:75:6e:21:ff:f1:91:3c:03:2a:40:08:13";
// ed25519-sk enrolled with -O no-touch-required -O verify-required (flags 0x04)
inline constexpr std::string_view sk_ed25519_nt_pub =
    "AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIFhGhoucwqo5Ss5fnu78ukLb06dAZ/pk7wgxWOC3qFouAAAABHNzaDo=";
// ecdsa-sk with application "ssh:test"
inline constexpr std::string_view sk_ecdsa_app_pub =
    "AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBDGfU5bZ43NVx2V7CLrebGaVeQZNTHoaVmHlfTPZU0LJxt/FzemqZQxZc59QnQZjpI52HrEQg2oUSiXfcGRnvQEAAAAIc3NoOnRlc3Q=";
inline constexpr std::string_view sk_ecdsa_app_fp =
    "SHA256:2DUiULPgE1N4VHFJ8mq3yO6TwhK08Ne/FgP0nZm41Ts";

inline constexpr std::string_view sk_signed_message = "hello sk\n";
// flags 0x01, counter 7
inline constexpr std::string_view sk_ed25519_sshsig = R"(-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAAEoAAAAac2stc3NoLWVkMjU1MTlAb3BlbnNzaC5jb20AAAAgA9u4VM
Kt1/F08D0Tz0oaeJ12hLEuSDK5Dl9uqTAJIJgAAAAEc3NoOgAAAARmaWxlAAAAAAAAAAZz
aGE1MTIAAABnAAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAQFgqhcYRTLXX7L
DjaTDpz8Wy+Z78fxcrWkEROnumtHV9AfmJKQeU2kHlb86iTr7mpwYEg1fo+bSS9vHlxD/b
5gcBAAAABw==
-----END SSH SIGNATURE-----
)";
// flags 0x01, counter 7
inline constexpr std::string_view sk_ecdsa_sshsig = R"(-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAAH8AAAAic2stZWNkc2Etc2hhMi1uaXN0cDI1NkBvcGVuc3NoLmNvbQ
AAAAhuaXN0cDI1NgAAAEEE84BHhP0K9mTphzAYUpWfBIJKtoDaf8p4LP82lG7a1dmFy5Mv
siTnwPobytv9bclR+CzVKEEs4+6eu5Fm+brbNgAAAARzc2g6AAAABGZpbGUAAAAAAAAABn
NoYTUxMgAAAHkAAAAic2stZWNkc2Etc2hhMi1uaXN0cDI1NkBvcGVuc3NoLmNvbQAAAEoA
AAAhAO5VbCRbMtiOmhhNLDGdI2+LQhp/+Ajzcz041P7DgP3yAAAAIQDtDxlvRy+7y0XcMd
xN3PtlUNUp/Rq1V+v4G/IQOKzhtgEAAAAH
-----END SSH SIGNATURE-----
)";
// flags 0x04 (no touch), counter 7
inline constexpr std::string_view sk_ed25519_nt_sshsig = R"(-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAAEoAAAAac2stc3NoLWVkMjU1MTlAb3BlbnNzaC5jb20AAAAgWEaGi5
zCqjlKzl+e7vy6QtvTp0Bn+mTvCDFY4LeoWi4AAAAEc3NoOgAAAARmaWxlAAAAAAAAAAZz
aGE1MTIAAABnAAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAQDUcy4t9qAMR4v
+8RDzGYP6A/FKLc+J3WN942j0FPtri7O0i03wg7/7wZGZdVK78sx1wofJP9XRlZUR8nQE1
bggEAAAABw==
-----END SSH SIGNATURE-----
)";
// private key file of sk_ed25519_pub: flags 0x01, 48-byte key handle, comment "edk"
inline constexpr std::string_view sk_ed25519_private = R"(-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAASgAAABpzay1zc2
gtZWQyNTUxOUBvcGVuc3NoLmNvbQAAACAD27hUwq3X8XTwPRPPShp4nXaEsS5IMrkOX26p
MAkgmAAAAARzc2g6AAAAmJcGlkOXBpZDAAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY2
9tAAAAIAPbuFTCrdfxdPA9E89KGniddoSxLkgyuQ5fbqkwCSCYAAAABHNzaDoBAAAAMDAu
AgEAMAUGAytlcAQiBCAQBTW/xOWP6hlpoZFBIVGJzodMUYGrq/cmxPcJ+C/HBgAAAAAAAA
ADZWRrAQIDBAUG
-----END OPENSSH PRIVATE KEY-----
)";
// private key file of sk_ecdsa_pub: comment "eck"
inline constexpr std::string_view sk_ecdsa_private = R"(-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAfwAAACJzay1lY2
RzYS1zaGEyLW5pc3RwMjU2QG9wZW5zc2guY29tAAAACG5pc3RwMjU2AAAAQQTzgEeE/Qr2
ZOmHMBhSlZ8Egkq2gNp/yngs/zaUbtrV2YXLky+yJOfA+hvK2/1tyVH4LNUoQSzj7p67kW
b5uts2AAAABHNzaDoAAAEQiUdU3IlHVNwAAAAic2stZWNkc2Etc2hhMi1uaXN0cDI1NkBv
cGVuc3NoLmNvbQAAAAhuaXN0cDI1NgAAAEEE84BHhP0K9mTphzAYUpWfBIJKtoDaf8p4LP
82lG7a1dmFy5MvsiTnwPobytv9bclR+CzVKEEs4+6eu5Fm+brbNgAAAARzc2g6AQAAAHkw
dwIBAQQgojzrKehXxnUOZe74iw0wrVSKpu5n1PxqH9kt+SCq8W6gCgYIKoZIzj0DAQehRA
NCAATzgEeE/Qr2ZOmHMBhSlZ8Egkq2gNp/yngs/zaUbtrV2YXLky+yJOfA+hvK2/1tyVH4
LNUoQSzj7p67kWb5uts2AAAAAAAAAANlY2s=
-----END OPENSSH PRIVATE KEY-----
)";
// ided re-encrypted with `ssh-keygen -p -N longhaul-test` (aes256-ctr, bcrypt)
inline constexpr std::string_view sk_ed25519_private_encrypted = R"(-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABDfdDLCuZ
oTwUqjsZzd3Q3eAAAAEAAAAAEAAABKAAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t
AAAAIAPbuFTCrdfxdPA9E89KGniddoSxLkgyuQ5fbqkwCSCYAAAABHNzaDoAAACg9Fjr+/
Lbmo9aQkl2JcMhxUiY8o0e+Kddtk0jygMQX1xYrFyiQHJSwpBRcr/2QfW08Br5xPxKzdRN
amCNFrOhWrkXOfxSkbxIKft6NWHO4hybowOvOPzZF1UaOJ48QlHjUAypuB4+DqVKFEdRfC
TpYUCEdBU9wKZmwjUL5PEGAkYrlmGyXKiG0o5jVvWMoiDdPHXPGWaj+z3kh05I6emG/g==
-----END OPENSSH PRIVATE KEY-----
)";
// user cert of sk_ed25519_pub by an ssh-ed25519 CA: id "vrcert", principal root, critical verify-required
inline constexpr std::string_view sk_ed25519_vr_cert =
    "AAAAI3NrLXNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIMcqxVP9LfLnbfhL9syWuPdE/mBfboFaYgEz5+fmckPZAAAAIAPbuFTCrdfxdPA9E89KGniddoSxLkgyuQ5fbqkwCSCYAAAABHNzaDoAAAAAAAAAAAAAAAEAAAAGdnJjZXJ0AAAACAAAAARyb290AAAAAAAAAAD//////////wAAABcAAAAPdmVyaWZ5LXJlcXVpcmVkAAAAAAAAAIIAAAAVcGVybWl0LVgxMS1mb3J3YXJkaW5nAAAAAAAAABdwZXJtaXQtYWdlbnQtZm9yd2FyZGluZwAAAAAAAAAWcGVybWl0LXBvcnQtZm9yd2FyZGluZwAAAAAAAAAKcGVybWl0LXB0eQAAAAAAAAAOcGVybWl0LXVzZXItcmMAAAAAAAAAAAAAADMAAAALc3NoLWVkMjU1MTkAAAAgQ6aKw/o8WarFf2Nhrvg3u8d0bhhmRgq5dEEkkc/788MAAABTAAAAC3NzaC1lZDI1NTE5AAAAQBNgypCItGEKa7cyp+3cXcs+wLbpD2SsZixXK5u3ed65AfexyaKx9BqSxLZMoTx/k3AP4lqXXo5H+lAnagZpoQY=";
// user cert of sk_ecdsa_pub: id "eccert", principal alice
inline constexpr std::string_view sk_ecdsa_cert =
    "AAAAK3NrLWVjZHNhLXNoYTItbmlzdHAyNTYtY2VydC12MDFAb3BlbnNzaC5jb20AAAAgJaQ1M0QhLNUD3zBrfHwFKLToWC5G7xm7SexJuORkrGMAAAAIbmlzdHAyNTYAAABBBPOAR4T9CvZk6YcwGFKVnwSCSraA2n/KeCz/NpRu2tXZhcuTL7Ik58D6G8rb/W3JUfgs1ShBLOPunruRZvm62zYAAAAEc3NoOgAAAAAAAAAAAAAAAQAAAAZlY2NlcnQAAAAJAAAABWFsaWNlAAAAAAAAAAD//////////wAAAAAAAACCAAAAFXBlcm1pdC1YMTEtZm9yd2FyZGluZwAAAAAAAAAXcGVybWl0LWFnZW50LWZvcndhcmRpbmcAAAAAAAAAFnBlcm1pdC1wb3J0LWZvcndhcmRpbmcAAAAAAAAACnBlcm1pdC1wdHkAAAAAAAAADnBlcm1pdC11c2VyLXJjAAAAAAAAAAAAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIEOmisP6PFmqxX9jYa74N7vHdG4YZkYKuXRBJJHP+/PDAAAAUwAAAAtzc2gtZWQyNTUxOQAAAEDIIfhNDaBT3DM0mC3poZhqbDbEQy9FOWw63OSbWobayZLajyp/K/1kzRMuaCIpr2ox1uDi+F1Y2vPrrI+7iMgJ";
// ssh-ed25519 user cert (id "skca", principal bob) signed by sk_ed25519_pub as CA
inline constexpr std::string_view sk_ca_signed_cert =
    "AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIKX0VuQIXG1+Yjo5UXWfbOUutf6UXkKnr7Y7RieeL4rGAAAAIEOmisP6PFmqxX9jYa74N7vHdG4YZkYKuXRBJJHP+/PDAAAAAAAAAAAAAAABAAAABHNrY2EAAAAHAAAAA2JvYgAAAAAAAAAA//////////8AAAAAAAAAggAAABVwZXJtaXQtWDExLWZvcndhcmRpbmcAAAAAAAAAF3Blcm1pdC1hZ2VudC1mb3J3YXJkaW5nAAAAAAAAABZwZXJtaXQtcG9ydC1mb3J3YXJkaW5nAAAAAAAAAApwZXJtaXQtcHR5AAAAAAAAAA5wZXJtaXQtdXNlci1yYwAAAAAAAAAAAAAASgAAABpzay1zc2gtZWQyNTUxOUBvcGVuc3NoLmNvbQAAACAD27hUwq3X8XTwPRPPShp4nXaEsS5IMrkOX26pMAkgmAAAAARzc2g6AAAAZwAAABpzay1zc2gtZWQyNTUxOUBvcGVuc3NoLmNvbQAAAECk63FXxxib3iDj0j7N2MQtC3zFjbg4ngbw3nyfQjTv69o+wjcpsLAD2911dj+GTfBtAOeqRYsI8ve74AUEfcAEAQAAAAc=";
inline constexpr std::string_view sk_ca_signed_cert_key_fp =
    "SHA256:RHg2FEuwMJDkB86GxB0n2AgZNixf3NyjLqHISfINMGQ";

} // namespace longhaul::test
