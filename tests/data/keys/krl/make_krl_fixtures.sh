#!/bin/sh
# Regenerates the KRL fixtures of this directory with OpenSSH's ssh-keygen
# (see README). The keys revoked are the test-only keys of tests/data/keys.
set -eu
cd "$(dirname "$0")"
K=..
rm -f -- *.krl *.spec *.query ca_key ca_key.pub ecdsa521-cert.pub

# A CA (its private half is deleted below) and one certificate it issued,
# for ecdsa521_plain_key, serial 4242.
ssh-keygen -q -t ed25519 -N '' -C 'longhaul krl test CA' -f ca_key
cp "$K/ecdsa521_plain_key.pub" ecdsa521.pub
ssh-keygen -q -s ca_key -I 'longhaul-cert' -n user -z 4242 ecdsa521.pub
mv ecdsa521-cert.pub ecdsa521-cert.pub.tmp && rm -f ecdsa521.pub && mv ecdsa521-cert.pub.tmp ecdsa521-cert.pub
rm -f ca_key

# keys.krl: plain keys revoked four ways (explicit key, SHA1, SHA256, and
# a SHA256 fingerprint), with a version number and a comment.
{
    echo '# plain keys'
    echo "key: $(cat "$K/ed25519_plain_key.pub")"
    echo "sha1: $(cat "$K/ecdsa256_plain_key.pub")"
    echo "sha256: $(cat "$K/rsa2048_plain_key.pub")"
    echo "hash: $(ssh-keygen -l -f "$K/ecdsa384_plain_key.pub" | cut -d' ' -f2)"
} > keys.spec
ssh-keygen -q -k -f keys.krl -z 7 -C 'longhaul test' keys.spec

# certs.krl: certificates of ca_key.pub revoked by serial (ssh-keygen picks
# list, range and bitmap subsections by size) and by key ID, plus the
# certificate file ecdsa521-cert.pub (by its serial, 4242).
cat > certs.spec <<'SPEC'
serial: 1
serial: 5-9
serial: 0x20
serial: 100
serial: 102
serial: 104
serial: 1000-1003
serial: 1000000
serial: 2000000
serial: 5000000-6000000
serial: 0xffffffffffffff00-0xffffffffffffffff
id: alice@example.com
id: bob
SPEC
ssh-keygen -q -k -f certs.krl -s ca_key.pub certs.spec ecdsa521-cert.pub

# updated.krl: keys.krl with -u adding a plain key file and certs.spec.
cp keys.krl updated.krl
ssh-keygen -q -k -u -f updated.krl -s ca_key.pub "$K/rsa3072_plain_key.pub" certs.spec

# empty.krl: a KRL revoking nothing.
ssh-keygen -q -k -f empty.krl

# What ssh-keygen -Q -l prints for each (times in UTC), exit status last.
for krl in keys certs updated empty; do
    set +e
    TZ=UTC ssh-keygen -Q -l -f "$krl.krl" "$K/ed25519_plain_key.pub" "$K/ecdsa256_plain_key.pub" \
        "$K/ecdsa384_plain_key.pub" "$K/ecdsa521_plain_key.pub" "$K/rsa2048_plain_key.pub" \
        "$K/rsa3072_plain_key.pub" > "$krl.query" 2>&1
    echo "status $?" >> "$krl.query"
    set -e
done
sed -i "s#\\.\\./##g" -- *.query
