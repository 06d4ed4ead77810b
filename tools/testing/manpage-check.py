#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# The man pages against what the tools accept (static.sh runs it):
#   mpacat(8)  every option of mpacat's getopt tables (long_opts[] and the
#              short option string in tools/mpacat/mpacat.c) is in the man
#              page's OPTIONS and in "mpacat --help", and every option
#              those two name is one getopt accepts;
#   mpactl(8)  every global option and every command of mpactl's argument
#              parser (build_parser()), with each command's options,
#              actions ("policy set") and policy keys, is in the man page
#              (OPTIONS, and a .SS per command in COMMANDS), and the man
#              page names nothing the parser does not have.
# Prints what differs; exits 1 if anything does.
#
# usage: manpage-check.py MPACAT_BINARY
"""Compare the man pages' option lists with the tools'."""

import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MPACAT_C = os.path.join(TOP, 'tools', 'mpacat', 'mpacat.c')
MPACAT_8 = os.path.join(TOP, 'tools', 'mpacat', 'mpacat.8')
MPACTL = os.path.join(TOP, 'tools', 'mpactl', 'mpactl')
MPACTL_8 = os.path.join(TOP, 'tools', 'mpactl', 'mpactl.8')

OPT_RE = re.compile(r'^--?[A-Za-z0-9][-A-Za-z0-9]*$')

problems = []


def problem(text):
    problems.append(text)
    print(text)


def roff_text(line):
    """A roff line as plain text: no macro name, fonts, quotes, escapes."""
    macro = re.match(r'^\.([A-Z]{1,2})\s*', line)
    line = line[macro.end():] if macro else line
    line = re.sub(r'\\f[BIRP]', '', line)
    line = line.replace('\\-', '-').replace('\\~', ' ').replace('\\&', '')
    line = line.replace('\\%', '').replace('\\(dq', '"')
    words = re.findall(r'"[^"]*"|\S+', line)
    # .BR, .BI, ... alternate fonts between their arguments: joined as
    # they print
    sep = '' if macro and len(macro.group(1)) == 2 else ' '
    return sep.join(w.strip('"') for w in words)


def roff_tag(line):
    """The text of a .TP tag, options kept apart: '-l, --listen'."""
    line = re.sub(r'^\.[A-Z]{1,2}\s*', '', line)
    line = re.sub(r'\\f[BIRP]', ' ', line)
    line = line.replace('\\-', '-').replace('"', ' ')
    return line


def man_sections(path):
    """Yield (section, subsection title, .TP tag text) for each .TP."""
    section = sub = ''
    lines = open(path, encoding='utf-8').read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith('.SH '):
            section, sub = roff_text(line).strip(), ''
        elif line.startswith('.SS '):
            sub = line[4:].strip().strip('"')
        elif line.startswith('.TP') and i + 1 < len(lines):
            yield section, sub, lines[i + 1]


def tag_options(tag):
    return {w.rstrip(',') for w in roff_tag(tag).replace(',', ' ').split()
            if OPT_RE.match(w.rstrip(','))}


def compare(what, have, want_name, want, have_name):
    for o in sorted(want - have):
        problem(f'{what}: {o} is in {want_name} but not in {have_name}')


# --- mpacat ------------------------------------------------------------

def mpacat_getopt():
    src = open(MPACAT_C, encoding='utf-8').read()
    table = re.search(r'long_opts\[\]\s*=\s*\{(.*?)\n\};', src, re.S)
    short = re.search(r'getopt_long\([^"]*"([^"]*)"', src)
    if not table or not short:
        problem('mpacat.c: cannot find long_opts[] or the getopt_long() string')
        return set()
    opts = {'--' + n for n in re.findall(r'\{\s*"([^"]+)"', table.group(1))}
    opts |= {'-' + c for c in short.group(1).replace(':', '')}
    return opts


def mpacat_help(binary):
    try:
        out = subprocess.run([binary, '--help'], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        problem(f'mpacat --help failed: {e}')
        return set()
    opts = set()
    for line in out.splitlines():
        # option lines: two spaces, the options, two or more spaces, text
        if not re.match(r'^  -', line):
            continue
        tag = re.split(r'\s{2,}', line.strip())[0]
        opts |= {w for w in tag.replace(',', ' ').split() if OPT_RE.match(w)}
    return opts


def mpacat_man():
    opts = set()
    for section, _, tag in man_sections(MPACAT_8):
        if section == 'OPTIONS':
            opts |= tag_options(tag)
    return opts


def check_mpacat(binary):
    accepted = mpacat_getopt()
    helped = mpacat_help(binary)
    man = mpacat_man()
    compare('mpacat', man, 'getopt', accepted, 'mpacat.8')
    compare('mpacat', accepted, 'mpacat.8', man, 'getopt')
    compare('mpacat', helped, 'getopt', accepted, '--help')
    compare('mpacat', accepted, '--help', helped, 'getopt')
    return len(accepted)


# --- mpactl ------------------------------------------------------------

def load_mpactl():
    loader = importlib.machinery.SourceFileLoader('mpactl', MPACTL)
    spec = importlib.util.spec_from_loader('mpactl', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def parser_items(parser):
    """A parser's option strings (-h/--help left out: the man page names
    them once, in OPTIONS) and its positional arguments' choices."""
    items = set()
    for a in parser._actions:  # pylint: disable=protected-access
        if a.option_strings:
            items |= {o for o in a.option_strings if o not in ('-h', '--help')}
        elif a.choices and not isinstance(a.choices, dict):
            items |= set(a.choices)
    return items


def mpactl_parser(mod):
    p = mod.build_parser()
    glob = parser_items(p) | {'-h', '--help'}
    cmds = {}
    for a in p._actions:  # pylint: disable=protected-access
        if isinstance(a.choices, dict):
            for name, sub in a.choices.items():
                cmds[name] = parser_items(sub)
    # policy set's keys, as KEY=
    cmds.setdefault('policy', set()).update(k + '=' for k in mod.POLICY_KEYS)
    return glob, cmds


def mpactl_man():
    glob, cmds = set(), {}
    for section, sub, tag in man_sections(MPACTL_8):
        if section == 'OPTIONS':
            glob |= tag_options(tag)
        elif section == 'COMMANDS' and sub:
            items = cmds.setdefault(roff_text(sub).split()[0], set())
            items |= tag_options(tag)
            m = re.match(r'^([a-z][-a-z]*)=', roff_text(tag))
            if m:
                items.add(m.group(1) + '=')
    # commands with no .TP, and the actions named in the .SS titles (an
    # option counts as documented only in a .TP of its own)
    lines = open(MPACTL_8, encoding='utf-8').read().splitlines()
    section = ''
    for line in lines:
        if line.startswith('.SH '):
            section = roff_text(line).strip()
        elif line.startswith('.SS ') and section == 'COMMANDS':
            # the title without its metavariables (italic)
            title = re.sub(r'\\fI.*?\\f[BRP]', '', line[4:]).strip('"')
            words = roff_text(title).replace('[', ' ').split()
            items = cmds.setdefault(words[0], set())
            items |= {w for w in words[1:] if re.match(r'^[a-z]+$', w)}
    return glob, cmds


def check_mpactl():
    try:
        mod = load_mpactl()
    except Exception as e:  # pylint: disable=broad-except
        problem(f'cannot load {MPACTL}: {e}')
        return 0
    glob, cmds = mpactl_parser(mod)
    mglob, mcmds = mpactl_man()
    compare('mpactl', mglob, 'the parser', glob, 'mpactl.8 OPTIONS')
    compare('mpactl', glob, 'mpactl.8 OPTIONS', mglob, 'the parser')
    compare('mpactl', set(mcmds), 'the parser', set(cmds),
            'mpactl.8 COMMANDS')
    compare('mpactl', set(cmds), 'mpactl.8 COMMANDS', set(mcmds),
            'the parser')
    n = len(glob)
    for name in sorted(set(cmds) & set(mcmds)):
        compare(f'mpactl {name}', mcmds[name], 'the parser', cmds[name],
                'mpactl.8')
        compare(f'mpactl {name}', cmds[name], 'mpactl.8', mcmds[name],
                'the parser')
        n += len(cmds[name])
    return n


def main():
    if len(sys.argv) != 2:
        print(__doc__ + '\nusage: manpage-check.py MPACAT_BINARY',
              file=sys.stderr)
        return 2
    n_cat = check_mpacat(sys.argv[1])
    n_ctl = check_mpactl()
    print(f'mpacat: {n_cat} options; mpactl: {n_ctl} options, commands, '
          f'actions and keys; {len(problems)} differences')
    return 1 if problems or not n_cat or not n_ctl else 0


if __name__ == '__main__':
    sys.exit(main())
