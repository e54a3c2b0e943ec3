"""setup.py - the native half of ploom's build backend (setuptools).

pyproject.toml holds the metadata; this file adds what a wheel needs beyond
pure Python, so that `pip install .`, `pip wheel .`, `uv build` and
`uv sync` give a working ploom without the Makefile:

- the extension ploom._ploom, from pyext/*.c and the three files of
  lib/ it uses (event.c, the record buffer; err.c; policy.c, the choices past
  a schedule's prefix);
- the six utilities (ploom-explore, ...), each a cmd/ploom-*.c linked with
  every lib/*.c and lib/*/*.c, cJSON and libgit2.  They are built by the build_scripts
  step, so the wheel carries them in ploom-*.data/scripts/ and the installer
  puts them in the environment's bin/, beside its python: ploom.check and
  the utilities find each other there with no PATH set-up;
- the man pages of man/, as the wheel's data: the installer puts them in
  the environment's share/man/man1 and man5, where `man` finds them from
  the bin/ on PATH (man-db looks at ../share/man of each PATH entry).

setuptools builds in a temporary folder of its own, removed when it is done,
and writes the metadata (ploom.egg-info) there too: a `pip install .` leaves
nothing in the source tree, and build/ stays the Makefile's.

A missing compiler, pkg-config, cJSON, libgit2 or Python.h stops the build
with a message naming the Debian package to install.

The Makefile builds the extension and the utilities itself (with -Werror,
sanitizers on request) and installs this project in editable mode only for
its metadata; it sets PLOOM_BUILT_BY_MAKE=1, which leaves both out here.
"""

import atexit  # noqa: I001 - distutils is imported after setuptools, below
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.dist import Distribution
from setuptools.errors import PlatformError

# distutils is setuptools' own copy once setuptools is imported (Python 3.12
# has none of its own).
from distutils.ccompiler import new_compiler
from distutils.command.build_scripts import build_scripts
from distutils.sysconfig import customize_compiler

# Those of the Makefile's warnings that any compiler of a user's machine
# takes, without -Werror: a newer compiler's new warning must not break an
# install.  The Makefile keeps -Werror for development.
C_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Wshadow", "-Wstrict-prototypes", "-Wwrite-strings", "-Wvla"]
MACROS = [("_GNU_SOURCE", None)]

# pkg-config name -> (what it is, the Debian package that provides it)
SYSTEM_LIBS = {
    "libcjson": ("cJSON", "libcjson-dev"),
    "libgit2": ("libgit2", "libgit2-dev"),
}

NATIVE = os.environ.get("PLOOM_BUILT_BY_MAKE") != "1"
UTILITY_SOURCES = sorted(glob("cmd/ploom-*.c"))
MAN_PAGES = {section: sorted(glob(f"man/*.{section}")) for section in ("1", "5")}

# setuptools' defaults, build/ and python/ploom.egg-info, would be in the
# source tree, and build/ is the Makefile's.  Each run of this file (pip runs
# it once for each build step) gets its own folder: whatever a step hands to
# the next (the metadata, the wheel) goes to a folder that pip names.
OUT_OF_TREE = tempfile.mkdtemp(prefix="ploom-setuptools-")
atexit.register(shutil.rmtree, OUT_OF_TREE, ignore_errors=True)


def missing(what, package):
    """The error that stops the build when something of the system is missing."""
    return PlatformError(
        f"ploom: cannot build: {what} is missing. "
        f"On Debian or Ubuntu install it with: sudo apt-get install {package}"
    )


def check_compiler(compiler):
    """A compiler object's C compiler must exist: say which package has one."""
    cc = compiler.compiler_so[0] if getattr(compiler, "compiler_so", None) else "cc"
    if not shutil.which(cc):
        raise missing(f"the C compiler {cc!r}", "build-essential")


def pkg_config(*args):
    """pkg-config's words for the system libraries, checking each is there."""
    tool = os.environ.get("PKG_CONFIG", "pkg-config")
    if not shutil.which(tool):
        raise missing("pkg-config (it finds cJSON and libgit2)", "pkg-config")
    for name, (what, package) in SYSTEM_LIBS.items():
        if subprocess.run([tool, "--exists", name], check=False).returncode != 0:
            raise missing(f"{what} (pkg-config finds no {name}.pc)", package)
    out = subprocess.run([tool, *args, *SYSTEM_LIBS], check=True, capture_output=True, text=True).stdout
    return shlex.split(out)


def python_includes():
    """The folders to add for Python.h: none when sysconfig's has it.

    An interpreter unpacked into a private prefix may name /usr/include
    while its headers sit under its own prefix, so that is tried too."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}{getattr(sys, 'abiflags', '')}"
    if os.path.isfile(os.path.join(sysconfig.get_paths().get("include") or "", "Python.h")):
        return []
    # Python.h may come from the user's CPPFLAGS or CFLAGS.
    for word in shlex.split(os.environ.get("CPPFLAGS", "") + " " + os.environ.get("CFLAGS", "")):
        if word.startswith("-I") and os.path.isfile(os.path.join(word[2:], "Python.h")):
            return []
    for base in (sys.base_prefix, sys.base_exec_prefix):
        d = os.path.join(base, "include", version)
        if os.path.isfile(os.path.join(d, "Python.h")):
            return [d]
    raise missing(f"Python.h, the C headers of {version}", f"{version}-dev")


class BuildExtension(build_ext):
    """build_ext that first checks the compiler and Python's headers."""

    def build_extensions(self):
        check_compiler(self.compiler)
        for ext in self.extensions:
            ext.include_dirs = [*ext.include_dirs, *python_includes()]
        super().build_extensions()


class BuildUtilities(build_scripts):
    """Compiles the utilities into the scripts folder, instead of copying
    scripts: the installer then puts them in bin/."""

    def run(self):
        if not NATIVE:
            return
        compiler = new_compiler(force=True)
        customize_compiler(compiler)
        check_compiler(compiler)
        libs = pkg_config("--libs")
        cflags = pkg_config("--cflags")
        temp = os.path.join(self.get_finalized_command("build").build_temp, "utilities")
        common = sorted(glob("lib/*.c") + glob("lib/*/*.c")) + sorted(set(glob("cmd/*.c")) - set(UTILITY_SOURCES))
        compile_args = dict(output_dir=temp, macros=MACROS, include_dirs=["lib"], extra_postargs=C_FLAGS + cflags)
        common_obj = compiler.compile(common, **compile_args)
        self.outfiles = []
        for src in UTILITY_SOURCES:
            main_obj = compiler.compile([src], **compile_args)
            name = os.path.basename(src)[: -len(".c")]
            compiler.link_executable(
                main_obj + common_obj, name, output_dir=self.build_dir, extra_postargs=[*libs, "-lm"]
            )
            self.outfiles.append(os.path.join(self.build_dir, name))
        for path in self.outfiles:
            os.chmod(path, 0o755)

    def get_outputs(self):
        return [os.path.join(self.build_dir, os.path.basename(s)[: -len(".c")]) for s in UTILITY_SOURCES]

    def get_source_files(self):
        return UTILITY_SOURCES + sorted(glob("lib/*.c") + glob("lib/*/*.c"))


EXTENSION = Extension(
    "ploom._ploom",
    sources=[*sorted(glob("pyext/*.c")), "lib/event.c", "lib/err.c", "lib/policy.c"],
    depends=sorted(glob("lib/*.h") + glob("lib/*/*.h") + glob("pyext/*.h")),
    include_dirs=["lib"],
    define_macros=MACROS,
    # -fno-strict-aliasing as CPython builds its extensions; hidden
    # visibility keeps lib/'s functions out of the module's symbol table
    # (PyInit__ploom is exported by PyMODINIT_FUNC).  The extension only
    # encodes records: the decoder, which builds runs of the trace model,
    # is decode.c's, which it does not link.
    extra_compile_args=[*C_FLAGS, "-fno-strict-aliasing", "-fvisibility=hidden"],
)

class ManPagesEditable(Distribution):
    """An editable install (pip install -e) installs data files only when
    the distribution answers has_data(), which distutils spells
    has_data_files(): without this it would have no man pages."""

    def has_data(self):
        return self.has_data_files()


setup(
    distclass=ManPagesEditable,
    ext_modules=[EXTENSION] if NATIVE else [],
    # build_scripts runs only when there are scripts: the utilities' main
    # files stand for them, and BuildUtilities compiles them.
    scripts=UTILITY_SOURCES if NATIVE else [],
    data_files=[(f"share/man/man{section}", pages) for section, pages in MAN_PAGES.items()],
    cmdclass={"build_ext": BuildExtension, "build_scripts": BuildUtilities},
    options={"build": {"build_base": OUT_OF_TREE}, "egg_info": {"egg_base": OUT_OF_TREE}},
)
