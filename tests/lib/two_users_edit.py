#!/usr/bin/env python3
"""tests/harden/two_users.test, run by the attacker on stdin: edits a copy
of a snapshot in place, a file name of its middle (outside the first
and the last MiB, which the source key hashes) becoming EVIL_SITE.py of
the same length.

usage: python3 - SNAPSHOT < two_users_edit.py
"""
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
span = 1 << 20
mid = bytes(b[span:len(b) - span])
edited = mid.replace(b'optimizer.py', b'EVIL_SITE.py')
if edited == mid:
    sys.exit('nothing to edit in the middle of the snapshot')
b[span:len(b) - span] = edited
open(p, 'r+b').write(b)
