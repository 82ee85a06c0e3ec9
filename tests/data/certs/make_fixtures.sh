#!/bin/sh
# Certificate fixtures for tests/keys/certificate_test.cpp, made with Debian
# 12's ssh-keygen (OpenSSH_9.2p1). Test-only keys: never use them elsewhere.
# Re-running makes new keys: the tests compare against what these files say.
set -e
cd "$(dirname "$0")"
rm -f ca_* user_* host_* krl_* *.L
ssh-keygen -q -t ed25519 -N '' -C "longhaul test CA" -f ca_ed25519
ssh-keygen -q -t rsa -b 2048 -N '' -C "longhaul test RSA CA" -f ca_rsa
ssh-keygen -q -t ecdsa -b 384 -N '' -C "longhaul test ECDSA CA" -f ca_ecdsa384
ssh-keygen -q -t ed25519 -N '' -C "user ed25519" -f user_ed25519
ssh-keygen -q -t rsa -b 2048 -N '' -C "user rsa" -f user_rsa
ssh-keygen -q -t ecdsa -b 256 -N '' -C "user ecdsa" -f user_ecdsa256
ssh-keygen -q -t ed25519 -N '' -C "host ed25519" -f host_ed25519
# A user certificate with principals, a window, a serial and both critical options.
ssh-keygen -q -s ca_ed25519 -I "alice@longhaul" -n alice,bob -V 20200101000000:20400101000000 -z 42 \
    -O force-command=/bin/true -O source-address=127.0.0.1/32,::1 user_ed25519.pub
# RSA key, RSA CA signing with rsa-sha2-256, no extensions at all.
ssh-keygen -q -s ca_rsa -t rsa-sha2-256 -I "rsa user" -n alice -O clear -z 7 user_rsa.pub
# ECDSA key, ECDSA CA, no principals, forever.
ssh-keygen -q -s ca_ecdsa384 -I "any principal" user_ecdsa256.pub
# A host certificate.
ssh-keygen -q -s ca_ed25519 -h -I "host cert" -n host.example,127.0.0.1 -V 20200101000000:20400101000000 \
    -z 1000 host_ed25519.pub
# Expired, and signed with SHA-1 RSA (refused by default since OpenSSH 8.2).
cp user_ed25519.pub user_expired.pub
ssh-keygen -q -s ca_ed25519 -I expired -n alice -V 20000101000000:20010101000000 user_expired.pub
cp user_ed25519.pub user_sha1.pub
ssh-keygen -q -s ca_rsa -t ssh-rsa -I sha1 -n alice user_sha1.pub
rm -f user_expired.pub user_sha1.pub
for c in *-cert.pub; do TZ=UTC ssh-keygen -L -f "$c" > "${c%.pub}.L"; done
# KRLs: serial 42 under ca_ed25519, key ID "rsa user" under ca_rsa.
printf 'serial: 42\n' > krl.spec && ssh-keygen -q -k -f krl_serial42 -s ca_ed25519.pub krl.spec
printf 'id: rsa user\n' > krl.spec && ssh-keygen -q -k -f krl_id_rsa_user -s ca_rsa.pub krl.spec
rm -f krl.spec
