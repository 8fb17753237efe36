#!/usr/bin/env python3
"""Doc drift: what README.md, ARCHITECTURE.md, snapview(1) and --help say
about the code, checked against the code (tests/lint/docdrift.test).

    docdrift.py ROOT [SNAPVIEW]

ROOT is a source tree, SNAPVIEW the built program (for its command
table and its --help; the check of the commands is left out without
it). Each finding is one line
"FILE: reason" on stdout; the exit status is 1 when there is any.

  commands  every command of CLI_COMMANDS (src/cli/cli.h), as
            snapview --list-table commands prints it, has a section
            in snapview(1)'s COMMANDS, a line in README.md's "Use" list
            and one in snapview --help, and none of the three names a
            command the table lacks
  files     every path ARCHITECTURE.md names (in backquotes) exists: a
            path with a slash from ROOT (or as the end of a path in the
            tree: "tui/ui.c"), a bare name anywhere in the tree, NAME or
            NAME.in (a file configure makes); cmd_<name>.c is a family
            and must match a file; what the build makes (config.h, the
            library) is not looked for
  coverage  every src/**/*.c is named in ARCHITECTURE.md, by name or by
            family (view_<name>.c), and every header too, itself or
            through the .c of its name
  prefixes  every prefix of ARCHITECTURE.md's layer table is used in its
            directory (some identifier starts with it), and every
            function a .c file of that directory exports (a definition
            not marked static, style(9): the name at the start of a line)
            starts with one of them

Section references (a "section sign" and a number) are checked by
tests/lint/lint.sh, not here.
"""
import fnmatch
import os
import re
import subprocess
import sys

findings = []


def fail(where, why):
    findings.append('%s: %s' % (where, why))


def read(root, rel):
    with open(os.path.join(root, rel), encoding='utf-8') as f:
        return f.read()


# ---- commands ----------------------------------------------------------------

def cli_commands(snapview):
    out = subprocess.run([snapview, '--list-table', 'commands'],
                         stdout=subprocess.PIPE, check=False)
    names = [line.split('\t')[0] for line in
             out.stdout.decode('utf-8', 'replace').split('\n') if line]
    if out.returncode != 0 or not names:
        fail('snapview --list-table commands', 'no command table')
        return []
    return names


def man_commands(root):
    man = read(root, 'doc/snapview.1')
    m = re.search(r'^\.SH COMMANDS\n(.*?)^\.SH ', man, re.S | re.M)
    if m is None:
        fail('doc/snapview.1', 'no COMMANDS section')
        return set()
    return set(re.findall(r'^\.TP\n\.B[IR]? +"?(\w+)', m.group(1), re.M))


def readme_commands(root):
    readme = read(root, 'README.md')
    m = re.search(r'^## Use\n(.*?)^## ', readme, re.S | re.M)
    if m is None:
        fail('README.md', 'no "## Use" section')
        return set()
    return set(re.findall(r'^ {4}snapview ([a-z]+)\b', m.group(1), re.M))


def help_commands(snapview):
    out = subprocess.run([snapview, '--help'], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, check=False).stdout
    text = out.decode('utf-8', 'replace').split('\nOptions:')[0]
    return set(re.findall(r'^  ([a-z]+) {2,}\S', text, re.M))


def check_commands(root, snapview):
    if snapview is None:
        return
    table = cli_commands(snapview)
    if not table:
        return
    where = [('doc/snapview.1', 'has no section under COMMANDS',
              man_commands(root)),
             ('README.md', 'is not in the Use list', readme_commands(root)),
             ('snapview --help', 'is not listed', help_commands(snapview))]
    for doc, what, names in where:
        for c in table:
            if c not in names:
                fail(doc, 'command %s (CLI_COMMANDS) %s' % (c, what))
        for c in sorted(names - set(table)):
            fail(doc, 'names a command %s that CLI_COMMANDS lacks' % c)


# ---- files -------------------------------------------------------------------

def tree(root):
    """Every file and directory under root, as paths relative to it."""
    files, dirs = set(), set()
    for d, subdirs, names in os.walk(root):
        subdirs[:] = [s for s in subdirs if s != '.git']
        rel = os.path.relpath(d, root)
        rel = '' if rel == '.' else rel + '/'
        for s in subdirs:
            dirs.add(rel + s)
        for n in names:
            files.add(rel + n)
    return files, dirs


def doc_names(text):
    """The paths a document names in backquotes."""
    out = []
    for t in re.findall(r'`([^`\n]+)`', text):
        if not re.fullmatch(r'[\w.<>*~/-]+', t):
            continue
        if re.fullmatch(r'\.[a-z0-9]+', t):
            continue            # a suffix (".c", ".snapidx")
        if '/' in t or re.search(r'\.(c|h|md|py|sh|test|1|am|a)$', t) or \
                t.startswith('.'):
            out.append(t)
    return out


def family(name):
    """cmd_<name>.c and check_*.c as a glob, else None."""
    if '<' not in name and '*' not in name:
        return None
    return re.sub(r'<[^>]*>', '*', name)


# What the build makes: configure's config.h, the library.
BUILT = re.compile(r'(.*/)?config\.h|.*\.a')


def exists(name, files, dirs):
    if BUILT.fullmatch(name):
        return True
    if family(name) is not None:
        pat = family(name)
        if '/' in pat:
            return any(fnmatch.fnmatch(f, pat) for f in files)
        return any(fnmatch.fnmatch(f.rsplit('/', 1)[-1], pat)
                   for f in files)
    bare = name.rstrip('/')
    if '/' in bare:
        if bare in files or bare in dirs or bare + '.in' in files:
            return True
        return any(p.endswith('/' + bare) for p in files | dirs)
    return any(p.rsplit('/', 1)[-1] in (bare, bare + '.in')
               for p in files | dirs)


def check_files(root, files, dirs):
    for name in sorted(set(doc_names(read(root, 'ARCHITECTURE.md')))):
        if not exists(name, files, dirs):
            fail('ARCHITECTURE.md', 'names %s, which is not in the tree'
                 % name)


# ---- coverage ----------------------------------------------------------------

def check_coverage(root, files):
    names = doc_names(read(root, 'ARCHITECTURE.md'))
    base = {n.rstrip('/').rsplit('/', 1)[-1] for n in names}
    pats = [family(n).rsplit('/', 1)[-1] for n in names
            if family(n) is not None]

    def named(b):
        return b in base or any(fnmatch.fnmatch(b, p) for p in pats)

    for f in sorted(files):
        if not f.startswith('src/') or not re.search(r'\.[ch]$', f):
            continue
        b = f.rsplit('/', 1)[-1]
        if named(b):
            continue
        if b.endswith('.h') and named(b[:-2] + '.c') and \
                f[:-2] + '.c' in files:
            continue
        fail('ARCHITECTURE.md', 'does not name %s (the layer table or '
             '"Where to make a change")' % f)


# ---- prefixes ----------------------------------------------------------------

def layer_table(root):
    text = read(root, 'ARCHITECTURE.md')
    m = re.search(r'^## The layers\n(.*?)^## ', text, re.S | re.M)
    rows = []
    for line in (m.group(1) if m else '').split('\n'):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 3 or not re.fullmatch(r'`src/\w+`', cells[0]):
            continue
        rows.append((cells[0].strip('`'), re.findall(r'`(\w+)`', cells[1])))
    if not rows:
        fail('ARCHITECTURE.md', 'no layer table under "## The layers"')
    return rows


def exported(text):
    """Functions a .c file defines without static (style(9): the return
    type on the line before the name)."""
    lines = text.split('\n')
    out = []
    for i in range(1, len(lines)):
        m = re.match(r'([A-Za-z_]\w*)\(', lines[i])
        prev = lines[i - 1]
        if m is None or prev.strip() == '' or prev.startswith(('#', ' ',
                                                               '\t', '/')):
            continue
        if re.match(r'static\b', prev) or prev.rstrip().endswith((';', '}',
                                                                  '\\')):
            continue
        if m.group(1).startswith('__'):
            continue            # a name a runtime looks up (sanitizers)
        out.append((i + 1, m.group(1)))
    return out


def check_prefixes(root, files):
    for d, prefixes in layer_table(root):
        srcs = sorted(f for f in files if f.startswith(d + '/') and
                      re.search(r'\.[ch]$', f))
        if not srcs:
            fail('ARCHITECTURE.md', 'layer %s has no sources' % d)
            continue
        texts = {f: read(root, f) for f in srcs}
        alltext = '\n'.join(texts.values())
        for p in prefixes:
            if not re.search(r'\b%s\w' % re.escape(p), alltext):
                fail('ARCHITECTURE.md', 'prefix %s of %s is used by no '
                     'name there' % (p, d))
        for f in srcs:
            if not f.endswith('.c'):
                continue
            for line, name in exported(texts[f]):
                if not any(name.startswith(p) for p in prefixes):
                    fail('%s:%d' % (f, line), '%s is exported but has '
                         'none of the prefixes ARCHITECTURE.md gives %s'
                         % (name, d))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: docdrift.py ROOT [SNAPVIEW]')
    root = sys.argv[1]
    snapview = sys.argv[2] if len(sys.argv) == 3 else None
    files, dirs = tree(root)
    check_commands(root, snapview)
    check_files(root, files, dirs)
    check_coverage(root, files)
    check_prefixes(root, files)
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == '__main__':
    sys.exit(main())
