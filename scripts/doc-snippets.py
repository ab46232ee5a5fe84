#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compile every C snippet of Documentation/*.rst and README.md (part of
`make docs`).

Every ``.. code-block:: c`` is compiled: as printed, a translation unit of
its own, unless an rst comment right before it (invisible in the HTML and
the man pages) says otherwise::

  .. snippet: kernel            a kernel translation unit (else user space)
  .. snippet: user              the same as no comment
  .. snippet: kernel            a fragment: the indented lines are the
     struct foo { ... };        translation unit, with the snippet in
     static void f(void)        place of the line "@@" (indented as
     {                          that line is)
             @@
     }

User-space snippets are compiled with cc -std=gnu11 -Wall -Wextra -Werror
against tools/lib/libtwheel.h and include/uapi (and the system's
liburing.h); kernel ones as objects of an external module with W=1 and
-Werror against the stock 6.1 headers and include/, the way a module that
uses twheel is built (unused static functions allowed: a snippet shows
code, not a module's registration).

C in a plain literal block (``::``), which nothing would compile, is an
error: a block with an #include line, or a line that ends in ';', '{' or
'}' and is not a shell or trace line, must be a code-block.

README.md's fenced ```c blocks are compiled the same way, the comment
before one being "<!-- snippet: kernel -->" (or a template up to "-->").

Usage: doc-snippets.py OUTDIR KDIR [RST or MD...]   (KDIR "" skips the kernel
ones).  Prints one line per snippet and a summary; exits 1 on a failure.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def indent_of(line):
    return len(line) - len(line.lstrip(' '))


def block_after(lines, i):
    """The indented block after line i (a directive or '::'), dedented;
    returns (text, index of the first line after it)."""
    j = i + 1
    # directive options (":caption: ...") and blank lines
    while j < len(lines) and (not lines[j].strip() or
                              re.match(r'^\s+:[a-z-]+:', lines[j])):
        j += 1
    if j >= len(lines):
        return '', j
    base = indent_of(lines[i])
    ind = indent_of(lines[j])
    if ind <= base:
        return '', j
    body = []
    while j < len(lines) and (not lines[j].strip() or indent_of(lines[j]) >= ind):
        body.append(lines[j][ind:] if lines[j].strip() else '')
        j += 1
    while body and not body[-1]:
        body.pop()
    return '\n'.join(body) + '\n', j


def marker_before(lines, i):
    """The '.. snippet:' comment right before line i (the code-block, at
    the comment's indent; its template lines are indented further), if
    any: (env, template or None)."""
    base = indent_of(lines[i])
    k = i - 1
    while k >= 0 and (not lines[k].strip() or indent_of(lines[k]) > base):
        k -= 1
    if k < 0:
        return None
    m = re.match(r'^\s*\.\. snippet: *(kernel|user)\s*$', lines[k])
    if not m or indent_of(lines[k]) != base:
        return None
    body = lines[k + 1:i]
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return m.group(1), None
    ind = min(indent_of(x) for x in body if x.strip())
    tmpl = '\n'.join(x[ind:] if x.strip() else '' for x in body) + '\n'
    if not re.search(r'^[ \t]*@@$', tmpl, re.M):
        raise SystemExit('line %d: a snippet template without an "@@" line' % (k + 1))
    return m.group(1), tmpl


def fill(tmpl, text):
    """The template with the snippet in place of its "@@" line, indented
    as that line is."""
    m = re.search(r'^([ \t]*)@@\n', tmpl, re.M)
    body = ''.join(m.group(1) + x if x.strip() else x
                   for x in text.splitlines(True))
    return tmpl[:m.start()] + body + tmpl[m.end():]


C_LINE = re.compile(r'^\s*#include\s*[<"]|[;{}]\s*(/\*.*\*/\s*)?$')
NOT_C = re.compile(r'^\s*(\$ |# |sudo |make |cd |echo |KERNEL==|options |twheel_|'
                   r'[a-z_]+: )')


def snippets(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    out, bad = [], []
    for i, line in enumerate(lines):
        if re.match(r'^\s*\.\. code-block:: *c\s*$', line):
            text, _ = block_after(lines, i)
            mk = marker_before(lines, i)
            env, tmpl = mk if mk else ('user', None)
            out.append((i + 1, env, tmpl, text))
        elif line.rstrip().endswith('::') and not re.match(r'^\s*\.\. ', line):
            text, _ = block_after(lines, i)
            clines = [x for x in text.split('\n')
                      if C_LINE.search(x) and not NOT_C.match(x)]
            if clines:
                bad.append((i + 1, clines[0].strip()))
    return out, bad


def md_snippets(path):
    """The same for Markdown (README.md): a fenced ```c block is compiled,
    after an optional "<!-- snippet: kernel|user" comment (a template in
    its lines, up to "-->"); C in an indented code block is an error."""
    lines = open(path, encoding='utf-8').read().split('\n')
    out, bad = [], []
    i = 0
    while i < len(lines):
        if lines[i].strip() == '```c':
            j = i + 1
            while j < len(lines) and lines[j].strip() != '```':
                j += 1
            text = '\n'.join(lines[i + 1:j]) + '\n'
            env, tmpl = 'user', None
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            if k >= 0 and lines[k].strip() == '-->' or \
                    k >= 0 and re.match(r'^<!-- snippet: .*-->$', lines[k]):
                e = k
                while e >= 0 and not lines[e].startswith('<!-- snippet:'):
                    e -= 1
                m = re.match(r'^<!-- snippet: *(kernel|user)\s*(-->)?$', lines[e])
                if not m:
                    raise SystemExit('%s:%d: bad snippet comment' % (path, e + 1))
                env = m.group(1)
                if not m.group(2):
                    tmpl = '\n'.join(lines[e + 1:k]) + '\n'
            out.append((i + 1, env, tmpl, text))
            i = j + 1
            continue
        if lines[i].startswith('    ') and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith('    ') or not lines[j].strip()):
                j += 1
            clines = [x for x in lines[i:j] if C_LINE.search(x) and not NOT_C.match(x)]
            if clines:
                bad.append((i + 1, clines[0].strip()))
            i = j
            continue
        i += 1
    return out, bad


def main():
    outdir, kdir = sys.argv[1], sys.argv[2]
    rsts = sys.argv[3:] or sorted(
        os.path.join(ROOT, 'Documentation', f)
        for f in os.listdir(os.path.join(ROOT, 'Documentation')) if f.endswith('.rst'))
    if not sys.argv[3:]:
        rsts.append(os.path.join(ROOT, 'README.md'))
    os.makedirs(os.path.join(outdir, 'user'), exist_ok=True)
    os.makedirs(os.path.join(outdir, 'kernel'), exist_ok=True)
    passed = failed = 0
    kernel = []
    for rst in rsts:
        name = os.path.relpath(rst, ROOT)
        found, bad = md_snippets(rst) if rst.endswith('.md') else snippets(rst)
        for line, first in bad:
            print('not ok - %s:%d: C in a literal block ("%s"): make it a '
                  '%s' % (name, line, first, '```c block' if rst.endswith('.md')
                          else '.. code-block:: c'))
            failed += 1
        for line, env, tmpl, text in found:
            src = fill(tmpl, text) if tmpl else text
            base = '%s_%d' % (os.path.basename(rst)[:-4].replace('-', '_'), line)
            what = '%s:%d (%s%s)' % (name, line, env, ', fragment' if tmpl else '')
            if env == 'kernel':
                with open(os.path.join(outdir, 'kernel', base + '.c'), 'w') as f:
                    f.write(src)
                kernel.append((base, what))
                continue
            cfile = os.path.join(outdir, 'user', base + '.c')
            with open(cfile, 'w') as f:
                f.write(src)
            cmd = ['cc', '-std=gnu11', '-Wall', '-Wextra', '-Werror',
                   '-Wno-unused-function', '-D_GNU_SOURCE',
                   '-I', os.path.join(ROOT, 'tools/lib'),
                   '-I', os.path.join(ROOT, 'include/uapi'),
                   '-c', '-o', cfile[:-2] + '.o', cfile]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0:
                print('ok - %s compiles' % what)
                passed += 1
            else:
                print('not ok - %s compiles' % what)
                print(''.join('# ' + x + '\n' for x in r.stderr.splitlines()), end='')
                failed += 1
    if kernel and kdir:
        kd = os.path.join(outdir, 'kernel')
        with open(os.path.join(kd, 'Kbuild'), 'w') as f:
            f.write('ccflags-y := -I%s -Wno-unused-function\n' % os.path.join(ROOT, 'include'))
            f.write('obj-m := %s\n' % ' '.join(b + '.o' for b, _ in kernel))
        for base, what in kernel:
            r = subprocess.run(['make', '--no-print-directory', '-C', kdir, 'M=' + kd,
                                'W=1', 'KCFLAGS=-Werror', base + '.o'],
                               capture_output=True, text=True)
            if r.returncode == 0 and 'warning:' not in r.stderr:
                print('ok - %s compiles' % what)
                passed += 1
            else:
                print('not ok - %s compiles' % what)
                print(''.join('# ' + x + '\n' for x in (r.stdout + r.stderr).splitlines()
                              if 'error' in x or 'warning' in x or x.startswith(base)), end='')
                failed += 1
    elif kernel:
        for _, what in kernel:
            print('ok - %s # SKIP no kernel build tree' % what)
    print('# %d C snippets compiled, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
