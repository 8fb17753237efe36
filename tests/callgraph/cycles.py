#!/usr/bin/env python3
"""File-level call cycles between the objects of an archive.

Reads `nm -A` of the archive (every member's defined and undefined
symbols), draws an edge A -> B when object A uses a symbol object B
defines, and prints every strongly connected component of more than one
file with the symbols that tie it together.

usage: cycles.py NM_OUTPUT [ALLOWED...]
  NM_OUTPUT  the output of `nm -A ARCHIVE`
  ALLOWED    cycles known and tolerated, each as "a.c,b.c" (sorted file
             names); exit 1 if any other cycle exists. An allowed one
             that is gone is named, to be taken off the list.
"""
import re
import sys


def source_name(member):
    # libsnapview_a-replay_ckpt.o -> replay_ckpt.c
    return re.sub(r"^[A-Za-z0-9_]+_a-", "", member).replace(".o", ".c")


def read(path):
    defs, uses = {}, {}
    for line in open(path):
        # archive.a:member.o:0000000000000000 T name  |  archive.a:member.o:  U name
        m = re.match(r"^[^:]*:([^:]+):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$",
                     line.rstrip("\n"))
        if not m:
            continue
        obj, kind, sym = source_name(m.group(1)), m.group(2), m.group(3)
        uses.setdefault(obj, set())
        if kind == "U":
            uses[obj].add(sym)
        elif kind.isupper():
            defs[sym] = obj
    edges = {o: {} for o in uses}
    for o, syms in uses.items():
        for s in syms:
            d = defs.get(s)
            if d is not None and d != o:
                edges[o].setdefault(d, []).append(s)
    return edges


def sccs(edges):
    """Tarjan's algorithm, iterative."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, {}))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    edges = read(sys.argv[1])
    allowed = {a for a in sys.argv[2:]}
    rc = 0
    found = set()
    for comp in sccs(edges):
        key = ",".join(comp)
        found.add(key)
        tag = "allowed" if key in allowed else "CYCLE"
        print("%s: %s" % (tag, " <-> ".join(comp)))
        for a in comp:
            for b, syms in sorted(edges[a].items()):
                if b in comp:
                    print("    %s -> %s: %s" % (a, b, ", ".join(sorted(syms)[:6])))
        if key not in allowed:
            rc = 1
    for a in sorted(allowed - found):
        print("note: allowed cycle %s is gone: take it off the list" % a)
    if not edges:
        print("no objects read")
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
