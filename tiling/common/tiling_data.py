"""TilingData: what every tiling family's answer shares, written once.

A family's tiling data is one or more C structs (CStruct models) in declaration order, plus host-side fields
(dtype, platform, notes, its tiling key, ...). A family declares only what differs:

- STRUCTS: (attribute, CStruct model) pairs in blob order; attribute None when the struct's members are fields
  of the tiling itself (the arch35 dx tiling is one flat struct);
- VALIDATE: its validator, `validate(tiling, platform=None, *, raise_error=False) -> ValidationReport`, or None
  when the family has none yet;
- its tiling key (a field, or derived from the fields) and block_dim.

The base owns the blob (to_bytes, to_words, from_bytes), fields(), field_ranges(), with_overrides() and check().
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from tiling.common.cstruct import C_RANGES, CStruct, check_overrides


class TilingData(BaseModel):
    """A tiling the kernel receives as a blob of C structs, and the host-side information beside it."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    STRUCTS: ClassVar[tuple[tuple[str | None, type[CStruct]], ...]] = ()
    VALIDATE: ClassVar[Callable | None] = None

    # --- the kernel's view -------------------------------------------------------------------------------
    @classmethod
    def blob_size(cls) -> int:
        return sum(model.size() for _, model in cls.STRUCTS)

    def _struct(self, attribute: str | None) -> CStruct:
        return self if attribute is None else getattr(self, attribute)

    def to_bytes(self) -> bytes:
        """The blob the kernel receives: each struct packed with its holes, in declaration order."""
        return b"".join(self._struct(attribute).pack() for attribute, _ in self.STRUCTS)

    def to_words(self) -> list[int]:
        """The blob as little-endian int32 words (the form the real unit tests print)."""
        return list(struct.unpack(f"<{self.blob_size() // 4}i", self.to_bytes()))

    @classmethod
    def from_bytes(cls, blob: bytes, **info):
        """Decode a blob; host-side fields (dtype, the tiling key, ...) may be passed as keywords."""
        if len(blob) != cls.blob_size():
            raise ValueError(f"blob has {len(blob)} bytes; a {cls.__name__} blob has {cls.blob_size()}")
        parts, offset = {}, 0
        for attribute, model in cls.STRUCTS:
            part = model.unpack(blob[offset:offset + model.size()])
            offset += model.size()
            if attribute is None:
                parts.update(part.model_dump())
            else:
                parts[attribute] = part
        return cls(**parts, **info)

    def fields(self) -> dict[str, int]:
        """Every kernel-visible field by its real name, in blob order (a name two structs share appears once)."""
        return {name: getattr(self._struct(attribute), name)
                for attribute, model in self.STRUCTS for name, _ in model.FIELDS}

    @classmethod
    def field_ranges(cls) -> dict[str, tuple[int, int]]:
        """{field: (low, high)}: the range of each kernel-visible field's C type."""
        return {name: C_RANGES[ctype] for _, model in cls.STRUCTS for name, ctype in model.FIELDS}

    # --- experimenting -----------------------------------------------------------------------------------
    def with_overrides(self, *, validate: bool = True, **changes):
        """A copy with some fields changed by real name (baseM=128, coreNum=8, ...); a name two structs share is
        set in both. Nothing is re-derived.

        The changes are refused first, one line per broken rule (unknown name with its close matches, not an
        integer, outside the field's C type). The copy is then checked by the family's validator on the tiling's
        platform: a tiling the kernel cannot run raises TilingValidationError (a ValueError) naming each broken
        rule as field=value, with the refused copy on the error (`err.tiling`, `err.report`). validate=False
        skips that check, for building illegal tilings on purpose.
        """
        cls = type(self)
        struct_fields = {name for _, model in self.STRUCTS for name, _ in model.FIELDS}
        top = self.model_dump(exclude={*struct_fields, *(a for a, _ in self.STRUCTS if a), *cls.model_computed_fields})
        check_overrides(changes, [model for _, model in self.STRUCTS], top)
        parts = {attribute: self._struct(attribute).model_dump(include={n for n, _ in model.FIELDS})
                 for attribute, model in self.STRUCTS}
        for key, value in changes.items():
            holders = [part for part in parts.values() if key in part]
            for part in holders:
                part[key] = value
            if not holders:
                top[key] = value
        top["notes"] = [*top["notes"], f"overridden: {sorted(changes)}"]
        for attribute, model in self.STRUCTS:
            if attribute is None:
                top.update(parts[None])
            else:
                top[attribute] = model(**parts[attribute])
        result = cls(**top)
        if validate:
            if cls.VALIDATE is None:
                raise ValueError(f"{cls.__name__} has no validator yet: pass validate=False")
            if result.platform is None:
                raise ValueError("with_overrides checks the result against the tiling's platform, and this tiling "
                                 "records none: pass platform=<Platform> among the overrides, or validate=False")
            cls.VALIDATE(result).raise_if_invalid(result, changes)
        return result

    def check(self, platform=None, *, raise_error: bool = False):
        """The family's validator: does this tiling fit `platform` (default: the platform it was made for)?"""
        if self.VALIDATE is None:
            raise ValueError(f"{type(self).__name__} has no validator yet")
        return type(self).VALIDATE(self, platform, raise_error=raise_error)
