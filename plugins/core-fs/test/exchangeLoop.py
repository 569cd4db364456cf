"""Swaps two names in one folder atomically (renameat2 RENAME_EXCHANGE), over and over.

Usage: exchangeLoop.py FIRST SECOND MAX_SWAPS MAX_SECONDS
Prints "ready" once the first swap succeeded, and the number of swaps done when it stops
(after MAX_SWAPS swaps, after MAX_SECONDS, or on SIGTERM). Used by the core-fs race test.
"""
import ctypes
import os
import signal
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2

libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
renameat2.restype = ctypes.c_int

first = os.fsencode(sys.argv[1])
second = os.fsencode(sys.argv[2])
max_swaps = int(sys.argv[3])
deadline = time.monotonic() + float(sys.argv[4])
stopping = False


def stop(_signum, _frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)
swaps = 0
while not stopping and swaps < max_swaps:
    if renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        sys.stderr.write(f"renameat2: {os.strerror(err)}\n")
        sys.exit(2)
    swaps += 1
    if swaps == 1:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
    if swaps % 1024 == 0 and time.monotonic() > deadline:
        break
# Leave the names as they were found: an even number of swaps.
if swaps % 2 == 1:
    renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE)
    swaps += 1
sys.stdout.write(f"{swaps}\n")
sys.stdout.flush()
