"""One plausible kernel bug at a time, for benchmarks/mutate_kernels.py: the mutation sites of a kernel module
(an AST node on a line the problems ran) and a mutant installed by swapping the __code__ of the functions it
changes. The module keeps its file name and line numbers, so a fault names the kernel's own lines; the kernel
files are never written.

Kinds: drop / double a synchronisation call (SetFlag, WaitFlag, PipeBarrier, EnQue, DeQue, FreeTensor, the
cross-core flags); move it after the next statement (late); a flag or event id + 1 (event); a loop bound -1 / +1
(range); + 1 or + 16 on an argument of a data instruction or its parameter struct (arg), on a tensor's element
offset in such a call (offset), on a parameter field assigned in the kernel (field); Mmad's cmatrixInitVal negated
(init)."""
from __future__ import annotations

import ast
import copy
import gc
import types
from dataclasses import dataclass

SYNC = {"SetFlag", "WaitFlag", "PipeBarrier", "FreeTensor", "EnQue", "DeQue", "CrossCoreSetFlag",
        "CrossCoreWaitFlag", "CvCrossCoreSet", "CvCrossCoreWait", "ReleaseEventID", "SyncAllCores", "FreeAllEvent"}
FLAG_ID_ARG = {"SetFlag": 1, "WaitFlag": 1, "CrossCoreSetFlag": 2, "CrossCoreWaitFlag": 0, "CvCrossCoreSet": 1,
               "CvCrossCoreWait": 0}
DATA = {"DataCopy", "DataCopyPad", "LoadData", "Mmad", "Fixpipe", "SetFmatrix", "InitConstValue", "Duplicate",
        "Adds", "Muls", "Cast", "TransDataTo5HD", "LoadDataWithTranspose", "DataCopyParams", "DataCopyExtParams",
        "Nd2NzParams", "LoadData2DParams", "LoadData2DParamsV2", "LoadData3DParamsV2", "LoadData2dTransposeParams",
        "MmadParams", "FixpipeParamsV220", "FixpipeParamsC310", "InitConstValueParams"}
PARAM_FIELDS = {"kStartPt", "mStartPt", "repeatTimes", "srcStride", "dstStride", "blockLen", "blockCount",
                "startIndex", "kExtension", "mExtension", "channelSize", "srcGap", "dstGap", "nSize", "mSize",
                "l1H", "l1W", "m", "n", "k", "mStep", "kStep", "cmatrixInitVal", "cmatrixSource", "repeat"}


@dataclass(frozen=True)
class Site:
    kind: str
    line: int
    desc: str
    path: tuple  # (statement index in _statements' order, operation, operands)

    def __str__(self):
        return f"{self.kind}@{self.line}: {self.desc}"


def _callee(call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _plus(expr, delta):
    return ast.copy_location(ast.BinOp(left=expr, op=ast.Add(), right=ast.Constant(delta)), expr)


def _statements(tree) -> list:
    """(parent, field, index, statement) of every statement inside a function, in a fixed order."""
    out = []

    def walk(node, in_function):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.stmt):
                        if in_function:
                            out.append((node, field, i, item))
                        walk(item, in_function or isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
            elif isinstance(value, ast.AST) and not isinstance(value, ast.expr):
                walk(value, in_function)
    walk(tree, False)
    return out


def _own_calls(stmt) -> list:
    """The calls in the statement's own expressions (not in the statements nested in it)."""
    calls = []
    for _, value in ast.iter_fields(stmt):
        for v in (value if isinstance(value, list) else [value]):
            if isinstance(v, ast.expr):
                calls += [n for n in ast.walk(v) if isinstance(n, ast.Call)]
    return calls


def _numeric(arg) -> bool:
    """Whether `arg + 16` may be a number (not a string, bool, tensor slice, container or enum-like name)."""
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, int | float) and not isinstance(arg.value, bool)
    if isinstance(arg, (ast.Subscript, ast.Lambda, ast.Starred, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict)):
        return False
    enum_like = isinstance(arg, ast.Name) and arg.id[:1].isupper()
    return not (enum_like or isinstance(arg, ast.Call) and _callee(arg) in DATA)


def sites(tree, lines: set) -> list[Site]:
    """Every mutation site of the module on the given (covered) lines, in source order."""
    found = []
    for n, (parent, field, i, stmt) in enumerate(_statements(tree)):
        if stmt.lineno not in lines:
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _callee(stmt.value) in SYNC:
            name = _callee(stmt.value)
            found += [Site("drop", stmt.lineno, f"drop {name}", (n, "drop")),
                      Site("double", stmt.lineno, f"double {name}", (n, "double"))]
            if i + 1 < len(getattr(parent, field)):
                found.append(Site("late", stmt.lineno, f"{name} moved after the next statement", (n, "late")))
            if len(stmt.value.args) > FLAG_ID_ARG.get(name, 99):
                found.append(Site("event", stmt.lineno, f"{name} flag id + 1", (n, "event")))
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call) and _callee(stmt.iter) == "range":
            found += [Site("range", stmt.lineno, f"loop bound {d:+d}", (n, "range", d)) for d in (-1, 1)]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute) \
                and stmt.targets[0].attr in PARAM_FIELDS:
            found += [Site("field", stmt.lineno, f".{stmt.targets[0].attr} {d:+d}", (n, "field", d)) for d in (1, 16)]
        for c, call in enumerate(_own_calls(stmt)):
            name = _callee(call)
            if name not in DATA:
                continue
            for a, arg in enumerate(call.args):
                if _numeric(arg):
                    found += [Site("arg", call.lineno, f"{name} argument {a} {d:+d}", (n, "arg", c, a, d))
                              for d in (1, 16)]
                elif isinstance(arg, ast.Subscript):
                    found += [Site("offset", call.lineno, f"{name} argument {a}: element offset {d:+d}",
                                   (n, "offset", c, a, d)) for d in (1, 16)]
            for k, kw in enumerate(call.keywords):
                if kw.arg == "cmatrixInitVal":
                    found.append(Site("init", call.lineno, "Mmad cmatrixInitVal negated", (n, "init", c, k)))
                elif kw.arg is not None and _numeric(kw.value):
                    found += [Site("arg", call.lineno, f"{name} {kw.arg} {d:+d}", (n, "keyword", c, k, d))
                              for d in (1, 16)]
    return found


def mutate(tree, site: Site):
    """A mutated copy of the module's tree."""
    tree = copy.deepcopy(tree)
    n, op, *rest = site.path
    parent, field, i, stmt = _statements(tree)[n]
    body = getattr(parent, field)
    if op == "drop":
        body[i] = ast.copy_location(ast.Pass(), stmt)
    elif op == "double":
        body.insert(i + 1, copy.deepcopy(stmt))
    elif op == "late":
        body[i], body[i + 1] = body[i + 1], body[i]
    elif op == "event":
        j = FLAG_ID_ARG[_callee(stmt.value)]
        stmt.value.args[j] = _plus(stmt.value.args[j], 1)
    elif op == "range":
        args = stmt.iter.args
        j = 0 if len(args) == 1 else 1
        args[j] = _plus(args[j], rest[0])
    elif op == "field":
        stmt.value = _plus(stmt.value, rest[0])
    else:
        call = _own_calls(stmt)[rest[0]]
        if op == "arg":
            call.args[rest[1]] = _plus(call.args[rest[1]], rest[2])
        elif op == "keyword":
            call.keywords[rest[1]].value = _plus(call.keywords[rest[1]].value, rest[2])
        elif op == "offset":
            call.args[rest[1]].slice = _plus(call.args[rest[1]].slice, rest[2])
        else:  # init
            kw = call.keywords[rest[1]]
            kw.value = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=kw.value), kw.value)
    return ast.fix_missing_locations(tree)


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def install(filename: str, tree) -> list:
    """Give every live function of `filename` whose code the mutated tree changes its new code (decorated,
    imported elsewhere and bound functions included: the function objects are kept); returns [(function, its old
    code)] for uninstall."""
    new = {(c.co_qualname, c.co_firstlineno): c for c in _codes(compile(tree, filename, "exec"))}
    swapped = []
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType and obj.__code__.co_filename == filename:  # type(): no weakproxy call
            code = new.get((obj.__code__.co_qualname, obj.__code__.co_firstlineno))
            if code is not None and code != obj.__code__ and code.co_freevars == obj.__code__.co_freevars:
                swapped.append((obj, obj.__code__))
                obj.__code__ = code
    return swapped


def uninstall(swapped: list) -> None:
    for function, code in swapped:
        function.__code__ = code
