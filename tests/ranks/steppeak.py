#!/usr/bin/env python3
"""The event `snapview diff --step K` compares after, worked out apart from
snapview: the Active Memory Timeline's running total from the pickle
(alloc adds its size, free_completed takes it away; blocks alive before
the trace only shift every total alike) and the step's event range from
gensnap's truth. Prints the first event of step K (from 1) after which
the total is highest.

usage: steppeak.py FILE.pickle FILE.truth.json K
"""
import json
import pickle
import sys


class Safe(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global refused")


def main():
    with open(sys.argv[1], 'rb') as f:
        data = Safe(f).load()
    truth = json.load(open(sys.argv[2]))
    k = int(sys.argv[3])
    first, last = truth['steps']['ranges'][k - 1]
    trace = data['device_traces'][0]
    total, best, best_ev = 0, None, None
    for i, e in enumerate(trace):
        if e['action'] == 'alloc':
            total += e['size']
        elif e['action'] == 'free_completed':
            total -= e['size']
        if first <= i <= last and (best is None or total > best):
            best, best_ev = total, i
    print(best_ev)


if __name__ == '__main__':
    main()
