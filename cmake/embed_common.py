"""What cuda_embed_fatbin.py and hip_embed_code_object.py share: the scan of a
kernel source for its extern "C" __global__ names (the lookup hint the
backends' module caches try first), the byte-array text and writing a file
only when its text changes (so an unchanged image does not recompile)."""
import re

# extern "C" __global__, then any mix of `void`, __launch_bounds__(...) and
# __attribute__((...)), then the kernel's name and its parameter list.
_QUALIFIERS = r'(?:\s+(?:void|__launch_bounds__\s*\([^)]*\)|__attribute__\s*\(\(.*?\)\)))*'
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
