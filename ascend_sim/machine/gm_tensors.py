"""GM tensors by their operator argument names: where each element of a logical tensor sits in its GM allocation.

An operator uploads its arguments in a device format (NDC1HWC0, FRACTAL_Z_3D, ND, ...) and reads its output back
through a conversion (NDC1HWC0 -> NCDHW, a crop, ...). A `GmTensor` keeps, for every element of the logical tensor,
the flat element index in the allocation (`where`), so that one element, a slice or the whole logical tensor can be
read from any copy of GM (the debugger's, at any position).

`trace_layout` finds that mapping from the very conversion the operator applies: it runs it on an array whose
elements are their own indices, so nothing about a format is written twice.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Comparison", "GmTensor", "compare", "from_device", "to_device", "trace_layout"]

_DIGIT_BITS = 14  # per pass: tags 1 .. 2**14 are finite positive values in float16, bfloat16 and float32 halves


@dataclass(frozen=True, eq=False)
class GmTensor:
    """name: the operator's argument name ("y", "filter", "a"); allocation: its GM allocation; dtype; the device
    format and shape it has in GM; the logical format; where: an int64 array of the logical shape holding each
    element's flat index in the allocation (viewed as dtype)."""

    name: str
    allocation: str
    dtype: np.dtype
    device_format: str
    device_shape: tuple
    logical_format: str
    where: np.ndarray

    @property
    def logical_shape(self) -> tuple:
        return self.where.shape

    def device(self, gm_bytes: np.ndarray) -> np.ndarray:
        """The allocation's bytes viewed in the device format."""
        size = int(np.prod(self.device_shape)) * self.dtype.itemsize
        return gm_bytes[:size].view(self.dtype).reshape(self.device_shape)

    def logical(self, gm_bytes: np.ndarray, index=()) -> np.ndarray:
        """The logical tensor (or `index` of it: integers and slices, numpy style) read from the allocation."""
        return gm_bytes.view(self.dtype)[self.where[index]]

    def flat_index(self, index: tuple) -> int:
        """The flat element index in the allocation of one logical element (a tuple of integers)."""
        check_index(self.name, index, self.logical_shape, self.logical_format)
        return int(self.where[tuple(index)])

    def device_index(self, index: tuple) -> tuple:
        """The device-format index of one logical element."""
        return tuple(int(i) for i in np.unravel_index(self.flat_index(index), self.device_shape))

    def byte_offset(self, index: tuple) -> int:
        return self.flat_index(index) * self.dtype.itemsize

    def logical_index(self, flat: int):
        """The logical index whose element sits at flat element `flat` of the allocation, or None (padding)."""
        found = int(self._logical_of[flat]) if 0 <= flat < self._logical_of.size else -1
        return tuple(int(i) for i in np.unravel_index(found, self.logical_shape)) if found >= 0 else None

    @functools.cached_property
    def _logical_of(self) -> np.ndarray:
        """For each element of the allocation, the flat logical index stored there, or -1."""
        inverse = np.full(int(self.where.max()) + 1, -1, np.int64)
        inverse[self.where.reshape(-1)] = np.arange(self.where.size)
        return inverse


def check_index(name: str, index: tuple, shape: tuple, fmt: str) -> None:
    """One element's index: as many integers as the shape has axes, each inside it (negative counts from the end
    as in numpy), else a ValueError naming the axis, the value and the range."""
    if len(index) != len(shape):
        raise ValueError(f"{name}[{', '.join(map(str, index))}]: {name} has {len(shape)} axes ({fmt} {shape}), "
                         f"got {len(index)} indices")
    for axis, (i, size) in enumerate(zip(index, shape)):
        if not isinstance(i, (int, np.integer)) or not -size <= i < size:
            label = fmt[axis] if len(fmt) == len(shape) else str(axis)
            raise ValueError(f"{name}[{', '.join(map(str, index))}]: index {i} of axis {label} outside "
                             f"[0, {size - 1}]")


def trace_layout(convert: Callable, shape: tuple, dtype) -> np.ndarray:
    """Where `convert` puts each element of an array of `shape` and `dtype`: an int64 array of convert's result
    shape holding the flat index (in the input) of the element at each position, -1 where convert put a zero of
    its own (padding).

    convert must only move, copy, crop and zero-pad elements (a format conversion). It is run on arrays whose
    elements carry their index in 14-bit digits (7-bit for 1-byte types; one run per digit), bit patterns that
    every dtype keeps."""
    dtype = np.dtype(dtype)
    if dtype.itemsize not in (1, 2, 4):
        raise ValueError(f"dtype={dtype} has {dtype.itemsize}-byte elements; trace_layout handles 1, 2 and 4")
    raw = np.dtype(f"u{dtype.itemsize}")
    bits = min(_DIGIT_BITS, 8 * dtype.itemsize - 1)  # tag + 1 must fit the raw type
    count = int(np.prod(shape))
    ids = np.arange(count, dtype=np.int64)
    digits = max(1, -(-max(count - 1, 1).bit_length() // bits))
    found = None
    for d in range(digits):
        tags = (((ids >> (bits * d)) & ((1 << bits) - 1)) + 1).astype(raw)
        out = np.asarray(convert(tags.view(dtype).reshape(shape)))
        digit = out.view(raw).astype(np.int64)
        if found is None:
            found = np.zeros(out.shape, np.int64)
            padding = digit == 0
        found += (digit - 1) << (bits * d)
    found[padding] = -1
    return found


def to_device(name: str, allocation: str, dtype, logical_format: str, logical_shape: tuple, device_format: str,
              convert: Callable) -> GmTensor:
    """A tensor the operator uploads: `convert` turns the logical array into what it puts in GM."""
    placed = trace_layout(convert, logical_shape, dtype)  # device shape: logical index there, or -1
    where = np.full(int(np.prod(logical_shape)), -1, np.int64)
    flat = placed.reshape(-1)
    stored = flat >= 0
    where[flat[stored]] = np.flatnonzero(stored)
    if (where < 0).any():
        raise ValueError(f"{name}: the conversion to {device_format} drops elements of the logical tensor")
    return GmTensor(name, allocation, np.dtype(dtype), device_format, tuple(placed.shape), logical_format,
                    where.reshape(logical_shape))


def from_device(name: str, allocation: str, dtype, device_format: str, device_shape: tuple, logical_format: str,
                convert: Callable) -> GmTensor:
    """A tensor the operator reads back: `convert` turns what is in GM into the logical array."""
    where = trace_layout(convert, device_shape, dtype)
    if (where < 0).any():
        raise ValueError(f"{name}: the conversion from {device_format} pads the logical tensor")
    return GmTensor(name, allocation, np.dtype(dtype), device_format, tuple(device_shape), logical_format, where)


@dataclass(frozen=True)
class Comparison:
    """A tensor against its reference: how many elements are wrong, the first (C order) with its value and the
    expected one, and the largest error |got - ref| / (|ref| + rms(ref))."""

    wrong: int
    total: int
    first: tuple | None
    got: float | None
    expected: float | None
    max_error: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.wrong == 0


def compare(got: np.ndarray, expected: np.ndarray, tolerance: float) -> Comparison:
    """Element by element: wrong where |got - ref| / (|ref| + rms(ref)) exceeds `tolerance` or got is not finite."""
    got64, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if got64.shape != expected.shape:
        raise ValueError(f"the reference has shape {expected.shape}, the tensor {got64.shape}")
    rms = float(np.sqrt(np.mean(expected ** 2))) or 1.0
    with np.errstate(invalid="ignore"):
        error = np.abs(got64 - expected) / (np.abs(expected) + rms)
    wrong = ~(error <= tolerance)  # NaN and infinities count as wrong
    worst = float(np.nanmax(error)) if np.isfinite(error).any() else float("inf")
    if not wrong.any():
        return Comparison(0, wrong.size, None, None, None, worst, tolerance)
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    return Comparison(int(wrong.sum()), wrong.size, first, got[first], float(expected[first]), worst, tolerance)
