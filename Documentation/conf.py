# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration of the twheel documentation.  Build it with
# `make docs` (scripts/docs.sh), which sets TWHEEL_KSRC to the extracted
# linux-source tree (tests/vm/kernels.sh source).  Its
# Documentation/sphinx/kerneldoc.py extension runs its scripts/kernel-doc
# on our sources, as the kernel's own documentation build does; nothing of
# the kernel is copied into this repository.

import os
import re
import sys

DOCDIR = os.path.dirname(os.path.abspath(__file__))
TOPDIR = os.path.dirname(DOCDIR)

KSRC = os.environ.get('TWHEEL_KSRC', '')
if not os.path.isfile(os.path.join(KSRC, 'scripts', 'kernel-doc')):
    raise RuntimeError('TWHEEL_KSRC must name an extracted linux-source tree '
                       '(tests/vm/kernels.sh source); run make docs')
sys.path.insert(0, os.path.join(KSRC, 'Documentation', 'sphinx'))


def package_version():
    """PACKAGE_VERSION of dkms.conf, the one version string of twheel."""
    with open(os.path.join(TOPDIR, 'dkms.conf'), encoding='utf-8') as f:
        m = re.search(r'^PACKAGE_VERSION="([^"]+)"', f.read(), re.M)
    return m.group(1) if m else 'unknown'


project = 'twheel'
author = 'twheel developers'
copyright = '2026, twheel developers'
version = release = package_version()

needs_sphinx = '3.1'
# kerneldoc: the kernel-doc directive.  Sphinx >= 3.1's own C domain
# renders its output (the kernel uses its cdomain.py only before 3.1).
extensions = ['kerneldoc']

# kernel-doc runs on paths relative to the top of the repository.
kerneldoc_bin = os.path.join(KSRC, 'scripts', 'kernel-doc')
kerneldoc_srctree = TOPDIR
# kernel-doc's messages are shown when it fails; scripts/docs.sh makes it
# fail on any warning (KDOC_WERROR).
kerneldoc_verbosity = 0

# Attributes the C domain must skip in kernel-doc prototypes.
c_id_attributes = ['__user', '__init', '__exit', '__must_check',
                   'LIBTWHEEL_EXPORT']

# -n: references that cannot be resolved are warnings (errors with -W).
# Kernel types and the opaque structures of the kernel are not ours to
# document.
nitpicky = True
nitpick_ignore = [('c:identifier', name) for name in (
    'u32', 'u64', 'ktime_t', 'lock_class_key',
    # libtwheel's: the C library's types, and io_uring's (liburing's or
    # <linux/io_uring.h>)
    'uint64_t', 'uint32_t', 'uint16_t', 'size_t', 'ssize_t', 'clockid_t', 'io_uring_sqe',
    'io_uring_cqe',
)]

# Quotes and ellipses, but no dashes: "--slack" in twheelctl(1) must stay
# two hyphens, not become an en dash a user cannot type back.
smartquotes_action = 'qe'

primary_domain = 'c'
highlight_language = 'none'
root_doc = 'index'
# generated/: result tables that benchmarks.rst includes (bench/results-rst.sh)
exclude_patterns = ['generated']

# Sphinx's man builder (scripts/docs.sh: build/docs/man), the pages that
# make install and the Debian packages install.
man_pages = [
    ('userspace-api', 'twheel', 'timing-wheel timers through /dev/twheel',
     [author], 4),
    ('twheelctl', 'twheelctl', 'look at and exercise /dev/twheel', [author], 1),
    ('libtwheel', 'libtwheel', 'C library of /dev/twheel', [author], 3),
]
man_show_urls = False

html_theme = 'alabaster'
html_title = 'twheel %s' % release
html_theme_options = {
    'description': 'hashed timing wheel timers for Linux',
    'fixed_sidebar': True,
    'page_width': '1100px',
    'sidebar_width': '240px',
}
html_sidebars = {'**': ['about.html', 'navigation.html', 'searchbox.html']}
html_show_sourcelink = False
html_copy_source = False
