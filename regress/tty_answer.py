#!/usr/bin/env python3
"""Runs a program on a new terminal (its controlling tty) and answers its
prompts as a user would type: tty_answer.py PROMPT ANSWER [PROMPT ANSWER...]
-- PROGRAM ARGS... Each answer is typed only once its prompt has been
shown (typing ahead would be flushed with the terminal's echo switched
off). Prints everything the terminal showed; exits with the program's
status (124 when it did not finish within 30 s)."""
import os
import pty
import select
import sys
import time

sep = sys.argv.index("--")
pairs = sys.argv[1:sep]
argv = sys.argv[sep + 1:]
script = [(pairs[i].encode(), pairs[i + 1].encode()) for i in range(0, len(pairs), 2)]

pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)

shown = b""
answered = 0
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        shown += data
    if answered < len(script) and shown.count(script[answered][0]) > sum(
            1 for p, _ in script[:answered] if p == script[answered][0]):
        time.sleep(0.05)  # let the program switch echo off first
        os.write(fd, script[answered][1] + b"\n")
        answered += 1
else:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    sys.stdout.write(shown.decode(errors="replace"))
    sys.exit(124)
_, status = os.waitpid(pid, 0)
sys.stdout.write(shown.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
