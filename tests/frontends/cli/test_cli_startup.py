"""`ascend-sim --help` and every command's own --help import no operator, tiling or numeric module (issue 22:
under 0.3 s; benchmarks/bench_cli_startup.py prints the times). Checked in a fresh interpreter by its sys.modules,
not by a timing."""
import json
import subprocess
import sys

import pytest
from paths import ROOT

# the commands this test covers (`sweep` is the tiling lab's: its own import cost)
OPERATORS = ["conv3d-dx", "conv3d-dw", "conv3d", "conv-backward", "matmul"]
HELPS = [[], ["tiling"], ["debug"], *([op] for op in OPERATORS), *(["tiling", op] for op in OPERATORS),
         *(["debug", op] for op in OPERATORS)]
HEAVY = ("numpy", "numba", "pydantic", "tiling", "ascend_sim", "torch")

PROBE = """
import json, sys
from frontends.cli.app import main
code = main(sys.argv[1:] + ["--help"])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules_after_help(words: list[str]) -> tuple[int, str, list[str]]:
    run = subprocess.run([sys.executable, "-c", PROBE, *words], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    probe = json.loads(run.stderr.strip().splitlines()[-1])
    return probe["code"], run.stdout, probe["modules"]


@pytest.mark.parametrize("words", HELPS, ids=lambda words: " ".join(words) or "top")
def test_help_imports_no_operator(words):
    code, out, modules = _modules_after_help(words)
    assert code == 0 and out.startswith(f"usage: ascend-sim {' '.join(words)}".rstrip())
    operators = [m for m in modules if m.startswith("kernels.") and not m.startswith("frontends.cli")]
    heavy = [m for m in modules if m.split(".")[0] in HEAVY]
    assert operators == [] and heavy == []


def test_top_level_help_lists_every_command():
    from frontends.cli.app import COMMANDS
    _, out, _ = _modules_after_help([])
    assert all(name in out for name in COMMANDS)


def test_dtype_help_names_every_dtype():
    from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
    from frontends.cli.flags import dtype_value
    assert all(name in dtype_value.help for name in [*DTYPES, *EIGHT_BIT_DTYPES])


def test_the_operators_stay_importable_from_kernels_after_their_subpackages():
    """kernels/__init__.py imports its operators on first use: `from kernels import conv3d_v2` is still the
    function when kernels.conv3d_v2 (the subpackage of the same name) was imported first."""
    probe = ("import kernels.conv3d_v2.operator, kernels.convolution_backward.operator\n"
             "import kernels\n"
             "from kernels import conv3d_v2, convolution_backward\n"
             "assert conv3d_v2 is kernels.conv3d_v2 and conv3d_v2.__module__ == 'kernels.conv3d_v2.operator'\n"
             "assert convolution_backward.__module__ == 'kernels.convolution_backward.operator'\n"
             "assert all(callable(getattr(kernels, name)) for name in kernels.__all__)\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_a_conv3d_dx_run_imports_no_other_operator():
    """A dx run on A2 (the conv kernel) loads neither the other operators and their tilings nor the 950's dx kernel,
    tiling and instructions nor the matmul kernel (kernels/, tiling/, ascend_sim.isa.arch35 and ascend_sim.ascendc
    export lazily): issue 22's wall time."""
    probe = ("import json, sys\n"
             "from frontends.cli.app import main\n"
             "code = main(['conv3d-dx', '--cin', '16', '--cout', '16', '--dhw', '2,8,8', '--timing-only'])\n"
             "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}), file=sys.stderr)\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    probe_out = json.loads(run.stderr.strip().splitlines()[-1])
    assert probe_out["code"] == 0 and "kernels.conv3d_backprop_input.operator" in probe_out["modules"]
    unused = ("kernels.conv3d_backprop_filter", "kernels.conv3d_v2", "kernels.convolution_backward", "kernels.matmul",
              "tiling.conv3d_backprop_filter", "tiling.conv3d_v2", "tiling.matmul",
              "tiling.conv3d_backprop_input.arch35", "kernels.conv3d_backprop_input.kernel.arch35",
              *(f"ascend_sim.isa.arch35.{module}" for module in ARCH35_INSTRUCTIONS))
    loaded = [m for m in probe_out["modules"] if m.startswith(unused)]
    assert loaded == []


# the 950's own instruction modules (the A2 vector core's DataCopy and Cast import arch35's common, loop_mode and
# cast_8bit: shared rules, no instruction of the 950's own)
ARCH35_INSTRUCTIONS = ("fixpipe_3510", "load2d_v2", "load3d_stride", "mte2_nz", "nddma", "reg", "ub_to_l1")


def test_the_950s_names_are_imported_from_ascendc_on_first_use():
    """ascend_sim.ascendc exports every name of ascend_sim.isa.arch35, loading its module when the name is read."""
    probe = ("import sys\n"
             "import ascend_sim.ascendc as ascendc\n"
             "from ascend_sim.isa import arch35\n"
             f"before = [m for m in sys.modules if m.split('.')[-1] in {ARCH35_INSTRUCTIONS!r}]\n"
             "assert before == [], before\n"
             "from ascend_sim.ascendc import NdDmaParams\n"
             "assert NdDmaParams.__module__ == 'ascend_sim.isa.arch35.nddma' and 'ascend_sim.isa.arch35.reg' not in sys.modules\n"
             "assert all(getattr(ascendc, name) is getattr(arch35, name) for name in arch35.__all__)\n"
             "assert ascendc.Reg is sys.modules['ascend_sim.isa.arch35.reg']\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_the_process_imports_its_command_with_the_collector_paused_and_runs_it_with_the_collector_on():
    """`ascend-sim <command>` as a process (main() without argv): the parser's imports (numpy, pydantic, the
    operator) set off no collection, and the command runs with the collector enabled again (frontends/cli/app.py)."""
    probe = ("import gc, json, sys\n"
             "starts = []\n"
             "gc.callbacks.append(lambda phase, info: phase == 'start' and starts.append(info['generation']))\n"
             "import frontends.cli.matmul_command as command\n"
             "real, seen = command.run, {}\n"
             "def run(args):\n"
             "    seen.update(enabled=gc.isenabled(), numpy='numpy' in sys.modules, collections=len(starts))\n"
             "    return real(args)\n"
             "command.run = run\n"
             "sys.argv = ['ascend-sim', 'matmul', '--m', '40', '--n', '24', '--k', '48', '--timing-only']\n"
             "from frontends.cli.app import main\n"
             "before = len(starts)\n"
             "import atexit\n"  # main() ends the process: what is seen is printed by an atexit handler
             "atexit.register(lambda: print(json.dumps({'before': before, **seen}), file=sys.stderr))\n"
             "main()\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    seen = json.loads(run.stderr.strip().splitlines()[-1])
    assert run.returncode == 0 and seen["numpy"] and seen["enabled"]
    assert seen["collections"] == seen["before"]


END_PROBE = """
import atexit, os, sys, threading, time
class Teardown:
    def __del__(self, write=os.write):  # runs in the interpreter's teardown, which the command's process skips
        write(2, b"torn down\\n")
torn = Teardown()
atexit.register(lambda: print("atexit ran", file=sys.stderr))
import frontends.cli.app as app
command = app._command
def run_then_start_a_thread(*args, **kwargs):  # a non-daemon thread still running when the command returns
    code = command(*args, **kwargs)
    threading.Thread(target=lambda: (time.sleep(0.5), print("thread done", file=sys.stderr))).start()
    return code
if sys.argv[1] == "thread":
    app._command = run_then_start_a_thread
sys.argv = ["ascend-sim", "tiling", "conv3d-dx", "--cin", "16", "--cout", "16", "--dhw", "2,8,8", *sys.argv[2:]]
sys.exit(app.main())
"""


@pytest.mark.parametrize("bad", [False, True], ids=["done", "bad input"])
def test_the_process_ends_after_its_atexit_handlers_and_output_without_the_teardown(bad):
    """`ascend-sim` (main() without argv) ends its process itself once the command returns (frontends/cli/app.py:
    freeing the run's objects cost 22 ms of the default run): the exit code, the whole stdout and the atexit
    handlers are kept; the teardown (here an object's __del__) is not run."""
    run = subprocess.run([sys.executable, "-c", END_PROBE, "none", *(["--cin", "0"] if bad else [])], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == (2 if bad else 0)
    assert "atexit ran" in run.stderr and "torn down" not in run.stderr
    assert bad or run.stdout.rstrip().endswith("the tiling fits (validated field by field)")


def test_with_a_non_daemon_thread_running_the_process_exits_as_python_does():
    run = subprocess.run([sys.executable, "-c", END_PROBE, "thread"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and "thread done" in run.stderr and "torn down" in run.stderr


KEPT_PROBE = """
import os, sys
import frontends.cli.conv3d_dx_command as command
class Freed:
    def __del__(self, write=os.write):
        write(2, b"run freed\\\\n")
simulate = command.simulate
def marked(*args, **kwargs):
    ran = simulate(*args, **kwargs)
    ran.marker = Freed()  # freed with the run
    return ran
command.simulate = marked
from frontends.cli.app import main
argv = ["conv3d-dx", "--cin", "16", "--cout", "16", "--dhw", "2,8,8"]
if sys.argv[1] == "process":
    sys.argv = ["ascend-sim", *argv]
    main()
code = main(argv)
os.write(2, b"returned\\\\n")
"""


@pytest.mark.parametrize("how", ["process", "in-process"])
def test_the_process_ends_before_its_run_is_freed(how):
    """The run (its records: 11 ms of the default run to free) is kept until the process ends
    (frontends/cli/app.py), not freed when the command returns; main(argv) in a longer-lived process frees it."""
    run = subprocess.run([sys.executable, "-c", KEPT_PROBE, how], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and "PASSED" in run.stdout
    if how == "process":
        assert "run freed" not in run.stderr and "returned" not in run.stderr
    else:
        assert run.stderr.index("run freed") < run.stderr.index("returned")
