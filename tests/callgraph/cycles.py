#!/usr/bin/env python3
"""File-level call cycles between the objects of an archive, and calls
from a lower layer of src/ to a higher one.

Reads `nm -A` of the archive (every member's defined and undefined
symbols), draws an edge A -> B when object A uses a symbol object B
defines, and prints every strongly connected component of more than one
file with the symbols that tie it together. With --src ROOT, each object
is also placed in its directory of ROOT/src (object names are unique
there) and every edge from a directory to one after it in
ROOT/tests/lint/layers.order is printed as a LAYER line: a single call
up the layers, which no cycle needs, is refused too.

usage: cycles.py [--src ROOT] NM_OUTPUT [ALLOWED...]
  ROOT       the source tree (src/ and tests/lint/layers.order)
  NM_OUTPUT  the output of `nm -A ARCHIVE`
  ALLOWED    cycles known and tolerated, each as "a.c,b.c" (sorted file
             names); exit 1 if any other cycle (or any LAYER edge)
             exists. An allowed one that is gone is named, to be taken
             off the list.
"""
import os
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


def layers_of(root):
    """(rank of each layer, directory of each .c file) from the tree."""
    rank = {}
    with open(os.path.join(root, "tests", "lint", "layers.order")) as f:
        for line in f:
            if not line.startswith("#"):
                for name in line.split():
                    rank[name] = len(rank)
    where = {}
    for d, _, files in os.walk(os.path.join(root, "src")):
        rel = os.path.relpath(d, os.path.join(root, "src"))
        top = rel.split(os.sep)[0]
        for f in files:
            if f.endswith(".c"):
                where[f] = top if rel != "." else "main"
    rank["main"] = len(rank)
    return rank, where


def layer_edges(edges, rank, where):
    """Every edge A -> B whose B lies in a higher layer than A, and every
    object that lies in no known layer."""
    bad = []
    for a in sorted(edges):
        la = where.get(a)
        if la not in rank:
            bad.append("LAYER: %s is in no layer of tests/lint/layers.order"
                       " (%s)" % (a, "src/" + la if la else "not in src/"))
            continue
        for b, syms in sorted(edges[a].items()):
            lb = where.get(b)
            if lb in rank and rank[lb] > rank[la]:
                bad.append("LAYER: %s/%s -> %s/%s: %s (%s calls the higher "
                           "layer %s)" % (la, a, lb, b,
                                          ", ".join(sorted(syms)[:6]), la, lb))
    return bad


def main():
    args = sys.argv[1:]
    root = None
    if len(args) >= 2 and args[0] == "--src":
        root, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    edges = read(args[0])
    allowed = {a for a in args[1:]}
    rc = 0
    if root is not None:
        for line in layer_edges(edges, *layers_of(root)):
            print(line)
            rc = 1
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
