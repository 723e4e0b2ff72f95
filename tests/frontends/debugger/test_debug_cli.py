"""`ascend-sim debug`: scripted sessions (stdin a StringIO) checked against the Python API of ascend_sim.debug on
the same run, a -x command file, the one-line errors, and one real process fed by a here-doc."""
import io
import re
import subprocess
import sys

import numpy as np
import pytest
from paths import ROOT

from ascend_sim.debug import break_on
from frontends.cli import main

MATMUL = ["matmul", "--m", "256", "--n", "256", "--k", "64"]  # 4 cores, 140 records
CONV = ["conv3d-dx", "--cin", "16", "--cout", "16", "--dhw", "2,8,8", "--route", "v2"]  # 2 AIC + 2 AIV (MIX)
PROMPT = "(ascend-sim) "


@pytest.fixture
def session(monkeypatch, capsys, debug_shells):
    """session(argv, script) -> (exit code, stdout, stderr, the shell): `ascend-sim debug <argv>` reading script."""
    shells = debug_shells

    def run(argv, script):
        monkeypatch.setattr(sys, "stdin", io.StringIO(script))
        code = main(["debug", *argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err, (shells[-1] if shells else None)
    return run


def replies(out: str) -> list[list[str]]:
    """The lines each command printed, in order (the text after each echoed prompt line)."""
    chunks = out.split(PROMPT)[1:]
    return [chunk.splitlines()[1:] for chunk in chunks]


def stop_index(line: str) -> int:
    return int(re.search(r"#(\d+) core", line).group(1))


CRITERIA = [
    ("name=Mmad", dict(name="Mmad")),
    ("Mmad", dict(name="Mmad")),
    ("pipe=FIX", dict(pipe="FIX")),
    ("core=3", dict(core=3)),
    ("name=Mmad core=2", dict(name="Mmad", core=2)),
    ("matmul_kernel.py:193", dict(source="matmul_kernel.py:193")),
    ("seq=57", dict(seq=57)),
    ("Mmad if rec.core >= 2", dict(name="Mmad", condition=lambda r: r.core >= 2)),
    ("if getattr(rec.params, 'm', 0) == 128 and rec.core == 3",
     dict(condition=lambda r: getattr(r.params, "m", 0) == 128 and r.core == 3)),
]


def test_breakpoints_stop_where_the_api_says(session):
    script = "".join(f"break {spec}\ncontinue\ncontinue\ndelete\ngoto start\n" for spec, _ in CRITERIA) + "quit\n"
    code, out, err, shell = session(MATMUL, script)
    assert code == 0 and err == ""
    got = [stop_index(line) for chunk in replies(out) for line in chunk if re.match(r"Breakpoint \d+, ", line)]
    dbg = shell.dbg
    expect = []
    for _, kwargs in CRITERIA:
        dbg.goto(0)
        for _ in range(2):
            rec = dbg.continue_(break_on(**kwargs))
            if rec is not None:
                expect.append(dbg.seq - 1)
    assert got == expect and len(expect) >= 13


def test_step_and_reverse_step_come_back_to_identical_where_output(session):
    script = ("break Mmad core=2\ncontinue\nwhere\nstep 5\nreverse-step 5\nwhere\ns\n\n\nrs 3\nwhere\n"
              "goto 40\nwhere\nrc\nrs\nwhere\nquit\n")
    code, out, _, shell = session(MATMUL, script)
    r = replies(out)
    at_mmad = r[2]
    assert at_mmad[0].startswith("#") and " Mmad " in at_mmad[0] and "MmadParams(" in at_mmad[1]
    assert r[5] == at_mmad  # step 5, reverse-step 5
    assert r[9] == at_mmad  # s, (empty: s), (empty: s), rs 3
    assert r[7][0] != r[6][0]  # the empty line repeated the step
    assert r[11][0].startswith("#40 ")
    # reverse-continue from #40 goes back to the Mmad of core 2 (#51 in this run is after it: to the start)
    first = stop_index(at_mmad[0])
    assert first == shell.dbg.records.index(next(x for x in shell.dbg.records if x.name == "Mmad" and x.core == 2))
    assert r[12] == r[11]
    if first < 40:
        assert r[13][0] == "Breakpoint 1, " + at_mmad[0]
    else:
        assert r[13] == ["At the start of the run: no record applied."]
        assert r[14][0].startswith("At the start of the run: no record applied; next: #0")  # rs at the start stays there
        assert r[15] == r[14]


def _matrix(lines: list[str]):
    """(name, array) from a `print L0x ... full` reply: the header gives the shape, numpy's text the values."""
    header = re.match(r"(L0[ABC]) core \d+ addr \d+: \((\d+), (\d+)\) (\w+)", lines[0])
    values = np.array(" ".join(lines[1:]).replace("[", " ").replace("]", " ").split(), np.float64)
    # each printed value is the shortest text that reads back as the value in the printed dtype
    values = values.astype(header.group(4)).astype(np.float64)
    return header.group(1), values.reshape(int(header.group(2)), int(header.group(3)))


@pytest.mark.parametrize("argv, core", [(MATMUL, 1), (CONV, 2),  # CONV's core 2 is AIC 1
                                        (MATMUL + ["--platform", "Ascend950PR_9589"], 1)])  # L0A is NZ there
def test_print_l0c_after_an_mmad_is_the_product_of_the_printed_operands(session, argv, core):
    code, out, _, shell = session(argv, f"break Mmad core={core}\ncontinue\np L0A full\np L0B full\np L0C full\n"
                                        f"print L0C\nquit\n")
    r = replies(out)
    (_, a), (_, b), (_, c) = _matrix(r[2]), _matrix(r[3]), _matrix(r[4])
    dbg = shell.dbg
    rec = dbg.record
    assert rec.name == "Mmad" and rec.core == core
    m, n, k = rec.params.m, rec.params.n, rec.params.k
    assert a.shape == (m, k) and b.shape == (k, n) and c.shape == (m, n)
    # the printed text is the API's views exactly (floatmode unique round-trips)
    assert np.array_equal(a, dbg.l0a(core, rec.args.a0, m, k, rec.args.dtype).astype(np.float64))
    assert np.array_equal(b, dbg.l0b(core, rec.args.b0, k, n, rec.args.dtype).astype(np.float64))
    assert np.array_equal(c, dbg.l0c(core, rec.args.c0_addr, m, n).astype(np.float64))
    if rec.params.cmatrixInitVal:
        assert np.allclose(c, a @ b, rtol=1e-5, atol=1e-4)
    else:
        dbg.back()
        before = dbg.l0c(core, rec.args.c0_addr, m, n).astype(np.float64)
        assert np.allclose(c, before + a @ b, rtol=1e-5, atol=1e-4)
    assert "..." in "\n".join(r[5])  # without `full` a 128 x 128 matrix is truncated


# CONV's Fixpipes write the AICs' workspace slots (its vector cores then write y with DataCopyPad)
@pytest.mark.parametrize("argv, gm, byte", [(MATMUL, "C", 2 * (200 * 256 + 130)), (CONV, "workspace", 64)])
def test_who_wrote_names_the_fixpipe_the_api_names(session, argv, gm, byte):
    code, out, _, shell = session(argv, f"goto end\nwho-wrote {gm} {byte}\nquit\n")
    lines = replies(out)[1]
    seqs = [int(re.match(r"\s+#(\d+) ", line).group(1)) for line in lines[1:]]
    writers = shell.dbg.who_wrote(gm, byte)
    assert seqs == [w.seq for w in writers] and writers[0].name == "Fixpipe"
    assert " Fixpipe " in lines[1] and "(wrote it)" in lines[1] and all("Mmad" in line for line in lines[2:])


BAD = ["bogus", "break", "break name=Nope", "break pipe=XYZ", "break core=99", "break nofile.py:3",
       "break Mmad if rec.core ==", "break color=red", "step -2", "step x", "goto 99999", "goto", "delete 7",
       "print", "print L0A", "print L0A core=0 addr=0 m=16", "print gm NOPE", "print gm C[0:x]", "print 1 +",
       "info", "info registers core=77", "who-wrote C", "who-wrote C 99999999", "who-wrote L9 0",
       "where now", "help nothing", "print gm C dtype=nodtype"]


def test_bad_commands_are_one_line_and_the_session_goes_on(session):
    code, out, err, _ = session(MATMUL, "\n".join(BAD) + "\necho still here\nwhere\nquit\n")
    r = replies(out)
    assert code == 0 and err == ""
    for line, reply in zip(BAD, r):
        assert len(reply) == 1 and reply[0].startswith("error: "), (line, reply)
    assert r[len(BAD)] == ["still here"]
    assert r[len(BAD) + 1][0].startswith("At the start of the run")


def test_a_failing_condition_stops_there_like_gdb(session):
    code, out, _, shell = session(MATMUL, "break if rec.params.m > 0\ncontinue\nquit\n")
    r = replies(out)
    assert "its condition fails on #0" in r[0][0]
    assert r[1][0].startswith("error: breakpoint 1's condition failed on #0") and r[1][1].startswith("#0 ")


def test_a_command_file_runs_first(session, tmp_path):
    script = tmp_path / "cmds.gdb"
    script.write_text("# a comment\nbreak Mmad core=3\ncontinue\n\necho from the file\n")
    code, out, _, shell = session(["-x", str(script), *MATMUL], "where\nquit\n")
    r = replies(out)
    assert r[0] == [] and r[1][0].startswith("Breakpoint 1")  # the comment, then break
    assert r[2][0].startswith("Breakpoint 1, #") and " Mmad " in r[2][0]
    assert r[3] == []  # an empty line in a file does not repeat
    assert r[4] == ["from the file"] and r[5] == [r[2][0][len("Breakpoint 1, "):], r[2][1]]
    # -x after the operator works too
    code, out2, _, _ = session([*MATMUL, "-x", str(script)], "quit\n")
    assert code == 0 and replies(out2)[2] == r[2]


@pytest.mark.parametrize("argv, flag", [
    (["-x", "/no/such/file", *MATMUL], "-x"),
    ([*MATMUL, "--timing-only"], "--timing-only"),
    ([*MATMUL, "--json"], "--json"),
    (["conv3d-dx", "--no-records"], "the debugger replays the instruction records"),
    ([*MATMUL, "--strid", "2"], "unrecognized"),
    (["matmul", "--m", "0"], "--m"),
    (["nothing"], "invalid choice"),
])
def test_refused_input_at_the_start_is_one_line_and_exit_2(session, argv, flag):
    code, out, err, _ = session(argv, "quit\n")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ascend-sim debug") and ": error: " in lines[0], err
    assert flag in lines[0]


def test_the_command_line_reads_a_here_doc_script():
    script = f"""cd {ROOT} && {sys.executable} -m frontends.cli debug matmul --m 64 --n 48 --k 80 <<'EOF'
break Mmad
continue
print L0C
info pipes
list
quit
EOF"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    r = replies(done.stdout)
    assert r[1][0].startswith("Breakpoint 1, #") and " Mmad " in r[1][0]
    assert r[2][0].startswith("L0C core 0 addr 0: (64, 48) float32")
    assert any(" M " in line and "Mmad" in line for line in r[3])
    assert any(line.startswith("=>") and "Mmad(" in line for line in r[4])


def test_the_transcript_in_docs_debugging_is_what_the_command_prints(session):
    text = (ROOT / "docs" / "debugging.md").read_text()
    block = text.split("## The command line: `ascend-sim debug`", 1)[1].split("```\n", 2)[1]
    lines = block.splitlines()
    assert lines[0].startswith("$ ascend-sim debug ")
    commands = [line[len(PROMPT):] for line in lines if line.startswith(PROMPT)]
    code, out, _, _ = session(lines[0].split()[3:], "\n".join(commands) + "\nquit\n")
    printed = out.splitlines()
    for line in lines[1:]:
        if "..." not in line:
            assert line in printed, line


def test_on_a_terminal_it_prompts_and_stops_at_end_of_input(session, monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    typed = iter(["break Mmad core=3", "continue", "", "where"])
    prompts = []

    def fake_input(prompt):
        prompts.append(prompt)
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr(sys, "stdin", Terminal(""))
    code = main(["debug", *MATMUL])
    assert code == 0 and prompts == [PROMPT] * 5
    out = capsys.readouterr().out.splitlines()
    # the banner: headline, tensors, records; no echo on a terminal; `continue`, then an empty line repeats it
    # (core 3 has one Mmad: to the end)
    assert out[1] == "tensors: a ND (1, 256, 64), b ND (1, 64, 256), c ND (1, 256, 256)"
    assert out[3].startswith("Breakpoint 1: name=Mmad core=3")
    assert out[4].startswith("Breakpoint 1, #") and " core 3 pipe M Mmad " in out[4]
    assert out[6].startswith("The run ended") and out[7].startswith("#139 ") and out[-1] == ""
