#!/usr/bin/env python3
"""Embeds a device-code image into libhal as a C++ byte array, or writes the
table of them that the backend looks kernels up in.

  embed_device_code.py KIND NAME IMAGE SOURCE OUT.cpp
      -> the image as a byte array and its size, plus the kernel names found
         in SOURCE (extern "C" __global__ functions; a lookup hint only)
  embed_device_code.py KIND --registry OUT.cpp NAME...
      -> the backend's table of the embedded images

KIND is cuda (fatbins: hal::cuda::detail::fatbin_<NAME>[], the table
hal::cuda::embedded_fatbins()) or hip (clang offload bundles:
hal::hip::detail::code_object_<NAME>[], the table
hal::hip::embedded_code_objects(); each also carries the offload targets its
bundle holds, read from the bundle's header, so that a load failure can name
them).
"""
import re
import struct
import sys
from dataclasses import dataclass


# extern "C" __global__, then any mix of `void`, __launch_bounds__(...) (one
# level of parentheses inside),
# __attribute__((...)) and a HAL_ macro standing for bounds chosen per
# architecture, then the kernel's name and its parameter list.
_QUALIFIERS = (r'(?:\s+(?:void|__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)|__attribute__\s*\(\(.*?\)\)'
               r'|HAL_[A-Z0-9_]+\b(?!\s*\()))*')
KERNEL_RE = re.compile(r'extern\s+"C"\s+__global__' + _QUALIFIERS + r'\s+(\w+)\s*\(')
_DEFINE_RE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$', re.M)


def _logical_lines(text):
    """The source with backslash-continued lines joined."""
    return re.sub(r'\\\n', ' ', text)


def kernel_names(source_text):
    """Sorted extern "C" kernel names of a source. A kernel declared inside a
    macro whose name is a macro parameter (HAL_FLASH_KERNEL(name, ...)) is
    named by that argument of each invocation of the macro."""
    text = _logical_lines(source_text)
    names = set()
    macro_params = {}  # macro -> index of the parameter that names a kernel
    for m in _DEFINE_RE.finditer(text):
        params = [p.strip() for p in m.group(2).split(",")]
        for k in KERNEL_RE.findall(m.group(3)):
            if k in params:
                macro_params[m.group(1)] = params.index(k)
    body = _DEFINE_RE.sub("", text)
    names.update(k for k in KERNEL_RE.findall(body))
    for macro, index in macro_params.items():
        for args in re.findall(r'^[ \t]*' + macro + r'\s*\(([^)]*)\)', body, re.M):
            parts = [a.strip() for a in args.split(",")]
            if index < len(parts) and re.fullmatch(r'\w+', parts[index]):
                names.add(parts[index])
    return sorted(names)


def byte_rows(data, per_row=20):
    """The bytes as the rows of a C array initialiser."""
    return "\n".join("  " + ",".join(str(b) for b in data[i:i + per_row]) + "," for i in range(0, len(data), per_row))


def c_string_list(names):
    """'"a", "b", ' for a nullptr-terminated const char* array."""
    return "".join(f'"{k}", ' for k in names)


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


@dataclass(frozen=True)
class Kind:
    backend: str      # the namespace under hal::
    symbol: str       # the prefix of each image's symbols
    image: str        # the image file's extension, for the generated comment
    load_note: str    # why the array is 64-byte aligned
    header: str       # declares the table's entry type and function
    entry: str        # the table's entry type
    table: str        # the function that returns the table
    targets: bool     # whether each image names its offload targets


KINDS = {
    "cuda": Kind("cuda", "fatbin", "fatbin", "64-byte aligned: cuModuleLoadData reads the fatbin header in place.",
                 "backends/cuda/cuda_fatbins.h", "EmbeddedFatbin", "embedded_fatbins", False),
    "hip": Kind("hip", "code_object", "hipfb",
                "hipModuleLoadData reads the bundle header and the code objects in place.",
                "backends/hip/hip_code_objects.h", "EmbeddedCodeObject", "embedded_code_objects", True),
}

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def bundle_targets(data):
    """Offload target IDs in a clang offload bundle (host entries left out)."""
    if not data.startswith(BUNDLE_MAGIC):
        return []
    (count,) = struct.unpack_from("<Q", data, len(BUNDLE_MAGIC))
    pos = len(BUNDLE_MAGIC) + 8
    targets = []
    for _ in range(count):
        _offset, _size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        target = data[pos:pos + id_len].decode("ascii")
        pos += id_len
        if not target.startswith("host"):
            # "hipv4-amdgcn-amd-amdhsa--gfx940" -> "gfx940" (target ID with features kept)
            targets.append(target.split("--", 1)[-1])
    return targets


def embed(kind, name, image, source, out):
    data = open(image, "rb").read()
    kernels = kernel_names(open(source, encoding="utf-8").read())
    sym = f"{kind.symbol}_{name}"
    targets = f'extern const char {sym}_targets[] = "{",".join(bundle_targets(data))}";\n' if kind.targets else ""
    text = f"""// Generated from {name}.{kind.image} by cmake/embed_device_code.py. Do not edit.
#include <cstddef>

namespace hal::{kind.backend}::detail {{

// {kind.load_note}
alignas(64) extern const unsigned char {sym}[] = {{
{byte_rows(data)}
}};
extern const std::size_t {sym}_size = sizeof({sym});
extern const char* const {sym}_kernels[] = {{{c_string_list(kernels)}nullptr}};
{targets}
}}  // namespace hal::{kind.backend}::detail
"""
    write_if_changed(out, text)


def registry(kind, out, names):
    decls, rows = "", ""
    for n in names:
        sym = f"{kind.symbol}_{n}"
        decls += (f"extern const unsigned char {sym}[];\nextern const std::size_t {sym}_size;\n"
                  f"extern const char* const {sym}_kernels[];\n")
        fields = [f'"{n}"', f"detail::{sym}_kernels"]
        if kind.targets:
            decls += f"extern const char {sym}_targets[];\n"
            fields.append(f"detail::{sym}_targets")
        fields += [f"detail::{sym}", f"detail::{sym}_size"]
        rows += f"    {{{', '.join(fields)}}},\n"
    text = f"""// Generated by cmake/embed_device_code.py. Do not edit.
#include "{kind.header}"

namespace hal::{kind.backend} {{

namespace detail {{
{decls}}}  // namespace detail

std::span<const {kind.entry}> {kind.table}() {{
  static const {kind.entry} table[] = {{
{rows}  }};
  return {{table, sizeof(table) / sizeof(table[0])}};
}}

}}  // namespace hal::{kind.backend}
"""
    write_if_changed(out, text)


def main():
    a = sys.argv[1:]
    kind = KINDS.get(a[0]) if a else None
    if kind and len(a) >= 3 and a[1] == "--registry":
        registry(kind, a[2], a[3:])
    elif kind and len(a) == 5:
        embed(kind, *a[1:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
