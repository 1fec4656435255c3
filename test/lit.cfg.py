# lit configuration for torch-syncfree. Substitutions:
#   %check_torch_sync  run a case through BOTH front ends (plugin and tool) and FileCheck it
#   %torch_syncfree    the standalone command
#   %tidy_plugin       clang-tidy-22 --load=<plugin>
#   %mock_flags        compiler flags for the mock LibTorch headers
#   %torch113_flags / %torch211_flags  flags for the real header trees
import os
import re
import shutil
import subprocess
import tarfile

import lit.formats

config.name = "torch-syncfree"
# lit's per-test limit is the only time limit of the suite (issue 39): no test
# waits on a clock of its own, so a loaded machine makes tests slower, never
# failed; a test that hangs is stopped here. lit needs psutil to stop one.
try:
    import psutil  # noqa: F401
    lit_config.maxIndividualTestTime = 2400
except ImportError:
    lit_config.note("python3-psutil is missing: no per-test time limit")
# A read-only file even for root (CI runs as root): chattr +i where the file system allows it.
def _can_make_readonly():
    import tempfile
    probe_dir = tempfile.mkdtemp(dir=os.path.join(config.torch_syncfree_bin))
    probe = os.path.join(probe_dir, "probe.txt")
    open(probe, "w").write("x")
    helper = os.path.join(config.torch_syncfree_src, "test", "tool", "Inputs", "readonly.py")
    try:
        subprocess.check_call([sys.executable, helper, "on", probe], stderr=subprocess.DEVNULL)
        try:
            open(probe, "w").write("y")
            return False
        except OSError:
            return True
        finally:
            subprocess.call([sys.executable, helper, "off", probe], stderr=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError):
        return False
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)

import sys
if _can_make_readonly():
    config.available_features.add("readonly-files")
else:
    lit_config.note("cannot make a file read-only here (chattr +i refused): unwritable.test is UNSUPPORTED")
# CUDA host code (.cu): parsed with --cuda-host-only against the CUDA toolkit's headers.
cuda_root = "/usr/local/cuda"
if os.path.exists(os.path.join(cuda_root, "include", "cuda_runtime.h")):
    config.available_features.add("cuda")
    config.substitutions.append(
        ("%cuda_flags", "--cuda-host-only -Wno-unknown-cuda-version -isystem %s" %
         os.path.join(cuda_root, "include", "cccl")))
else:
    lit_config.note("CUDA toolkit not found at %s: .cu tests are UNSUPPORTED" % cuda_root)
# A real LSP client: Debian's Neovim (scripts/setup-deps.sh installs it).
# Emacs with eglot (Debian's emacs-nox and elpa-eglot) for test/tool/emacs.test.
if shutil.which("emacs") and (os.path.isdir("/usr/share/emacs/site-lisp/elpa/eglot-1.9") or any(
        n.startswith("eglot") for n in os.listdir("/usr/share/emacs/site-lisp/elpa")
        if os.path.isdir("/usr/share/emacs/site-lisp/elpa"))):
    config.available_features.add("emacs-eglot")
else:
    lit_config.note("emacs or eglot not found (apt-get install emacs-nox elpa-eglot): "
                    "emacs.test is UNSUPPORTED")
if shutil.which("nvim"):
    config.available_features.add("nvim")
else:
    lit_config.note("nvim not found (apt-get install neovim): nvim.test is UNSUPPORTED")
if shutil.which("pre-commit"):
    config.available_features.add("pre-commit")
else:
    lit_config.note("pre-commit not found (apt-get install pre-commit): pre-commit.test is UNSUPPORTED")
config.substitutions.append(("%{path}", os.environ.get("PATH", "/usr/bin:/bin")))
multitool = os.path.join(config.torch_syncfree_src, ".cache", "sarif-multitool", "node_modules",
                         "@microsoft", "sarif-multitool-linux", "Sarif.Multitool")
if os.access(multitool, os.X_OK):
    config.available_features.add("sarif-multitool")
    config.substitutions.append(("%sarif_multitool", multitool))
else:
    lit_config.note("Sarif.Multitool not installed (scripts/setup-deps.sh installs it with npm): "
                    "sarif-multitool.test is UNSUPPORTED")
# A sanitizer build (scripts/test.sh --sanitize): ASan+UBSan in the tool; its
# instrumented plugin cannot load into clang-tidy-22, so the plugin leg is off.
if getattr(config, "torch_syncfree_sanitize", "OFF").upper() in ("ON", "1", "TRUE"):
    config.environment["TORCH_SYNCFREE_TOOL_ONLY"] = "1"
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
    config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    config.environment["LSAN_OPTIONS"] = "suppressions=" + os.path.join(
        config.torch_syncfree_src, "test", "lsan.supp")
    lit_config.note("sanitizer build: checking the tool only (the plugin leg is off)")
    if os.path.exists(os.path.join(config.torch_syncfree_bin, "bin", "torch-syncfree-fuzz")):
        config.available_features.add("fuzzer")
else:
    config.available_features.add("plugin")
# The ThreadSanitizer build (scripts/test.sh's TSan leg): only test/tsan runs
# there; elsewhere test/tsan is not discovered.
if getattr(config, "torch_syncfree_tsan", "OFF").upper() in ("ON", "1", "TRUE"):
    config.available_features.add("tsan")
    config.environment["TSAN_OPTIONS"] = "halt_on_error=0:exitcode=66:suppressions=" + os.path.join(
        config.torch_syncfree_src, "test", "tsan.supp")

config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cpp", ".cu", ".test"]
# Permission bits do not stop root: tests of unreadable or unenterable paths need another user.
# %unprivileged runs a command as a user that permission bits stop: as itself
# when not root; as root (CI), as nobody through util-linux's setpriv.
if hasattr(os, "geteuid") and os.geteuid() != 0:
    config.available_features.add("unprivileged-user")
    config.substitutions.append(("%unprivileged", ""))
elif shutil.which("setpriv"):
    config.available_features.add("unprivileged-user")
    config.substitutions.append(("%unprivileged", "setpriv --reuid=65534 --regid=65534 --clear-groups --"))
else:
    lit_config.note("running as root without setpriv: permission tests (untrusted-unenterable.test) are UNSUPPORTED")
# A full file system for the cache tests (untrusted-full-disk.test): a tmpfs in a
# mount namespace of the test's own, which needs root and mount.
def _can_fill_a_disk():
    import tempfile
    probe_dir = tempfile.mkdtemp(dir=config.torch_syncfree_bin)
    helper = os.path.join(config.torch_syncfree_src, "test", "tool", "Inputs", "full_disk.py")
    try:
        return subprocess.call([sys.executable, helper, "0", os.path.join(probe_dir, "full"), "--", "true"],
                               stderr=subprocess.DEVNULL) == 0
    except OSError:
        return False
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)
if _can_fill_a_disk():
    config.available_features.add("full-disk")
else:
    lit_config.note("cannot mount a small tmpfs here (needs root): untrusted-full-disk.test is UNSUPPORTED")
config.excludes = ["mock", "Inputs", "corpus", "blind", "conflict", "examples", "lit.cfg.py", "check_torch_sync.py", "expect_exit.py", "Output", "CMakeLists.txt"]  # corpus/: scored by real/corpus.test; blind/: scored by hand (docs/corpus.md)
# The gtest sources of test/unit/ (run by unit/engine.test and unit/tool.test).
config.excludes += [f for f in os.listdir(os.path.join(os.path.dirname(__file__), "unit")) if f.endswith("Test.cpp")]
if "tsan" not in config.available_features:
    config.excludes.append("tsan")  # run by the TSan leg only
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.torch_syncfree_bin, "test")

src = config.torch_syncfree_src
binary = os.path.join(config.torch_syncfree_bin, "bin", "torch-syncfree")
plugin = os.path.join(config.torch_syncfree_bin, "lib", "TorchSyncFreeTidyModule.so")
clang_tidy = shutil.which("clang-tidy-22") or "/usr/lib/llvm-22/bin/clang-tidy"
clangxx = shutil.which("clang++-22") or "/usr/lib/llvm-22/bin/clang++"
import sys
python = sys.executable

mock_flags = "-std=c++17 -isystem " + os.path.join(src, "test", "mock", "include")
config.substitutions.append(("%mock_flags", mock_flags))

# Real header trees: Debian's libtorch-dev (1.13) and the 2.11 tree from ../shared.
torch113 = "/usr/include/torch/csrc/api/include"
if os.path.exists(os.path.join(torch113, "torch", "torch.h")):
    config.available_features.add("libtorch-1.13")
    config.substitutions.append(
        ("%torch113_flags", "-std=c++17 -isystem " + torch113))
else:
    lit_config.note("LibTorch 1.13 headers not found (apt-get install libtorch-dev): "
                    "real-header tests for 1.13 are UNSUPPORTED")

tarball = os.path.join(os.path.dirname(src), "shared", "libtorch", "torch-2.11-include.tar.xz")
tree211 = os.path.join(config.torch_syncfree_bin, "third_party", "libtorch-2.11")
if not os.path.exists(os.path.join(tree211, "include", "torch")) and os.path.exists(tarball):
    os.makedirs(tree211, exist_ok=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(tree211)
if os.path.exists(os.path.join(tree211, "include", "torch")):
    config.available_features.add("libtorch-2.11")
    inc = os.path.join(tree211, "include")
    config.substitutions.append(
        ("%torch211_flags", "-std=c++17 -isystem %s -isystem %s/torch/csrc/api/include" % (inc, inc)))
else:
    lit_config.note("LibTorch 2.11 headers not found at %s: real-header tests for 2.11 are "
                    "UNSUPPORTED" % tarball)

helper = os.path.join(src, "test", "check_torch_sync.py")
# One precompiled <torch/torch.h> per flag set for the whole run, for the
# compile checks of real-header tests (test/syntax_oracle.py; CI time).
pch_cache = os.path.join(config.torch_syncfree_bin, "test", "syntax-oracle-pch")
common = "%s %s --tool %s --plugin %s --clang-tidy %s --clangxx %s --filecheck %s --pch-cache %s" % (
    python, helper, binary, plugin, clang_tidy, clangxx, config.filecheck, pch_cache)
config.substitutions.append(("%syntax_pch_cache", pch_cache))
config.substitutions.append(("%check_torch_sync", common))
config.substitutions.append(("%torch_syncfree", binary))
config.substitutions.append(("%tidy_plugin", "%s --load=%s" % (clang_tidy, plugin)))
config.substitutions.append(("%clangxx", clangxx))
config.substitutions.append(("%python", python))
config.substitutions.append(("%src", src))
config.substitutions.append(("%tool_unit_tests", os.path.join(config.torch_syncfree_bin, "bin", "tool-unit-tests")))
config.substitutions.append(("%engine_unit_tests", os.path.join(config.torch_syncfree_bin, "bin", "engine-unit-tests")))
config.substitutions.append(("%FileCheck", config.filecheck))
config.environment["HOME"] = os.environ.get("HOME", "/tmp")
# Shared PCHs of runs without -p go here, not into the user's ~/.cache.
config.environment["XDG_CACHE_HOME"] = os.path.join(config.torch_syncfree_bin, "test", "xdg-cache")
config.substitutions.append(
    ("%full_disk", "%s %s" % (python, os.path.join(src, "test", "tool", "Inputs", "full_disk.py"))))
config.substitutions.append(
    ("%expect_exit", "%s %s" % (python, os.path.join(src, "test", "expect_exit.py"))))
config.substitutions.append(
    ("%count", "%s -c \"import sys; n = len(sys.stdin.read().splitlines()); "
               "sys.exit(0 if n == int(sys.argv[1]) else (print('expected', sys.argv[1], 'lines, got', n) or 1))\"" % python))
# The checks Checks.def declares: tests that cover every check (--list-checks, the
# SARIF rule count) read them from there, so a new check edits no such test.
with open(os.path.join(src, "matchers", "Checks.def")) as checks_def:
    declared_checks = sorted(re.findall(r'^TORCH_SYNC_CHECK\(\s*\w+\s*,\s*"([^"]+)"', checks_def.read(), re.M))
config.substitutions.append(("%{check_count}", str(len(declared_checks))))
config.substitutions.append(("%{declared_checks}", " ".join(declared_checks)))
config.substitutions.append(("%{bindir}", os.path.join(config.torch_syncfree_bin, "bin")))
config.substitutions.append(("%{builddir}", config.torch_syncfree_bin))
config.substitutions.append(("%{plugin}", plugin))
