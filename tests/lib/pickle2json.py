#!/usr/bin/env python3
"""Writes a snapshot pickle's JSON twin, as memory_viz reads one
(pytorch#153171): json.dump of what pickle.load gives.

usage: pickle2json.py SNAPSHOT.pickle OUT.json

The pickle is read refusing any class, and the JSON written refusing
anything but dicts with string keys, lists, tuples (written as lists,
as a JSON snapshot holds them), strings, integers, floats, booleans and
None: a snapshot is plain data, and a value JSON cannot hold the same
way fails here (exit 1) instead of making a twin that is not one.
"""

import json
import pickle
import sys


class Plain(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("class %s.%s in a snapshot"
                                     % (module, name))


def check(obj, path='top'):
    """Walks obj without recursion (snapshots nest a few levels, but a
    fixture may not); raises ValueError on what JSON cannot hold."""
    todo = [(obj, path)]
    while todo:
        o, p = todo.pop()
        t = type(o)
        if t is dict:
            for k, v in o.items():
                if type(k) is not str:
                    raise ValueError('%s: a key of type %s'
                                     % (p, type(k).__name__))
                todo.append((v, p + '.' + k))
        elif t in (list, tuple):
            todo.extend((v, '%s[%d]' % (p, i)) for i, v in enumerate(o))
        elif o is not None and t not in (str, int, float, bool):
            raise ValueError('%s: a value of type %s' % (p, t.__name__))


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], 'rb') as f:
        obj = Plain(f).load()
    try:
        check(obj)
    except ValueError as e:
        sys.stderr.write('pickle2json: %s: %s\n' % (argv[1], e))
        return 1
    with open(argv[2], 'w') as f:
        json.dump(obj, f)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
