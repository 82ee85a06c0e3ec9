#!/bin/sh
# Regenerates the key fixtures of this directory with OpenSSH's ssh-keygen.
# They are test-only keys: never use them for anything else.
set -eu
cd "$(dirname "$0")"
PASS='longhaul-test'
rm -f -- *_key *_key.pub *.fp *.sig message.txt

# Default (openssh-key-v1) format, unencrypted and encrypted (aes256-ctr,
# bcrypt, 16 rounds), every type.
for spec in ed25519: ecdsa:256 ecdsa:384 ecdsa:521 rsa:2048 rsa:3072; do
    type=${spec%%:*}; bits=${spec#*:}
    name=${type}${bits}
    [ -n "$bits" ] && b="-b $bits" || b=
    ssh-keygen -q -t "$type" $b -N '' -C "longhaul $name plain" -f "${name}_plain_key"
    ssh-keygen -q -t "$type" $b -N "$PASS" -C "longhaul $name encrypted" -f "${name}_enc_key"
done

# The other ciphers ssh-keygen -Z accepts for key files, and a non-default
# bcrypt rounds count (-a).
for cipher in aes128-ctr aes192-ctr aes128-cbc aes256-cbc aes128-gcm@openssh.com \
              aes256-gcm@openssh.com chacha20-poly1305@openssh.com; do
    ssh-keygen -q -t ed25519 -Z "$cipher" -N "$PASS" -C "cipher $cipher" -f "ed25519_${cipher%@*}_key"
done
ssh-keygen -q -t ed25519 -a 24 -N "$PASS" -C "24 rounds" -f "ed25519_rounds24_key"

# PEM (traditional "BEGIN RSA/EC PRIVATE KEY", DEK-Info when encrypted) and
# PKCS#8 ("BEGIN PRIVATE KEY" / "BEGIN ENCRYPTED PRIVATE KEY").
for spec in ecdsa:256 ecdsa:384 ecdsa:521 rsa:2048; do
    type=${spec%%:*}; bits=${spec#*:}
    for fmt in PEM PKCS8; do
        f=$(echo "$fmt" | tr 'A-Z' 'a-z')
        ssh-keygen -q -t "$type" -b "$bits" -m "$fmt" -N '' -C "" -f "${type}${bits}_${f}_plain_key"
        ssh-keygen -q -t "$type" -b "$bits" -m "$fmt" -N "$PASS" -C "" -f "${type}${bits}_${f}_enc_key"
    done
done

# What ssh-keygen -l prints for each public key (SHA256 and MD5).
for pub in *_key.pub; do
    base=${pub%.pub}
    ssh-keygen -l -f "$pub" > "$base.fp"
    ssh-keygen -l -E md5 -f "$pub" >> "$base.fp"
done

# SSHSIG signatures (PROTOCOL.sshsig) of a fixed message, namespace "file".
printf 'Longhaul SSH test message\n' > message.txt
for key in *_plain_key; do
    case $key in *_pem_*|*_pkcs8_*) continue ;; esac
    ssh-keygen -q -Y sign -n file -f "$key" message.txt
    mv message.txt.sig "${key%_key}.sig"
done
