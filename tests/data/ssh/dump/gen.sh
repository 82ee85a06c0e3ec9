#!/bin/sh
# Regenerates the stored `ssh -G` outputs of OpenSSH 9.2 (Debian 12's
# openssh-client), run as root with HOME=/root: tests/ssh/config_dump_test.cpp
# compares Longhaul's dump_config() with them line by line.
cd "$(dirname "$0")"
ssh -G -F /dev/null somehost > default.G
ssh -G -F full.conf -o ProxyJump=none h > full.G
ssh -G -F match.conf web1.example.com > match_web1.G
ssh -G -F match.conf bad.example.com > match_bad.G
ssh -G -F /dev/null -p 2222 -l carol -4 -C -tt -e '^]' -c aes128-ctr,aes256-ctr -m hmac-sha2-256 \
    -o 'IdentityFile /nonexistent/id' -o ServerAliveCountMax=7 -L 8080:localhost:80 -D 1080 \
    -R 9000:127.0.0.1:22 -J jump@gw:2222 -N -o 'SetEnv A=1 B=2' -o 'EscapeChar none' options.host > options.G
