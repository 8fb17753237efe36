"""The tables snapview runs on, as `snapview --list-table` prints them
(one row a line, fields separated by tabs), for the tests that hold a
screen to them: the actions and the entries of the help pages.
"""
import subprocess


def listed(binary, what):
    """The rows of `snapview --list-table WHAT`, each a list of fields."""
    out = subprocess.run([binary, '--list-table', what], check=True,
                         stdout=subprocess.PIPE).stdout.decode('utf-8')
    return [line.split('\t') for line in out.split('\n') if line]


def actions(binary):
    """{name: (key1, key2, set of keymaps, help)} of every action."""
    rows = {}
    for name, k1, k2, maps, text in listed(binary, 'actions'):
        rows[name] = (k1, k2, set(maps.split(',')) - {''}, text)
    return rows


def help_entries(binary, page):
    """[(group, [action names], text)] of help page PAGE (viewer,
    ranks), in the page's order."""
    return [(group, acts.split(' '), text)
            for p, group, acts, text in listed(binary, 'help') if p == page]


def shown(k1, k2):
    """The key of an action as a help screen shows it: a printable key
    rather than an arrow, a named one without its brackets (worked out
    here again, not taken from the program)."""
    k = k2 if k1.startswith('<') and k2 and not k2.startswith('<') else k1
    return k[1:-1] if k.startswith('<') and len(k) > 2 else k
