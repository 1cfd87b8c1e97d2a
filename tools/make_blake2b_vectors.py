"""Writes tests/data/kv/blake2b_vectors.txt: keyed BLAKE2b digests from Python's hashlib
(an independent implementation, CPython's bundled libb2 code) for pagoda's own BLAKE2b.

Reference: Python 3 standard library hashlib.blake2b (any CPython >= 3.6).
Command:   python3 tools/make_blake2b_vectors.py > tests/data/kv/blake2b_vectors.txt
Each line: digest_bytes key_hex message_hex digest_hex ('-' stands for an empty field).
Inputs are deterministic (a fixed byte pattern), lengths straddle the 128-byte block.
"""
import hashlib
import sys


def pattern(n, seed):
    return bytes((i * 131 + seed * 7 + 3) & 0xFF for i in range(n))


def main():
    out = sys.stdout
    out.write("# python3 tools/make_blake2b_vectors.py (hashlib.blake2b, Python %s)\n"
              % sys.version.split()[0])
    for digest in (64, 32, 20, 1):
        for key_len in (0, 1, 32, 64):
            for msg_len in (0, 1, 3, 127, 128, 129, 255, 256, 257, 1000):
                key = pattern(key_len, 1)
                msg = pattern(msg_len, 2)
                d = hashlib.blake2b(msg, digest_size=digest, key=key).hexdigest()
                out.write("%d %s %s %s\n" % (digest, key.hex() or "-", msg.hex() or "-", d))


if __name__ == "__main__":
    main()
