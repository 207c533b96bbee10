#!/usr/bin/env python3
"""Compares the dynamic symbols a built libmax_c exports with the committed list.

    check_exported_symbols.py --library build-abi/libmax_c.so.1 \
        --expected abi_tests/exported_symbols.txt [--header include/max_c.h] \
        [--frozen-header abi_tests/frozen/max_c_1_0.h]

The committed list (abi_tests/exported_symbols.txt) holds one `name@@VERSION` per line,
sorted, as `nm -D --defined-only` prints them. The check fails (exit 1) when:

  * a symbol of the list is no longer exported, or is exported under another version
    (a program linked against it would no longer load);
  * the library exports a symbol that is not in the list. Additions fail too, on purpose:
    a new function is a promise for the whole of major 1, so the list is updated in the
    same change that adds it, where a reviewer sees it (see "Updating" below);
  * an exported symbol is not max_* (the version nodes MAX_x.y themselves excepted), or a
    max_* symbol carries no version (the version script was not applied);
  * with --header: a function the header declares (MAX_API ... max_x(...)) is not exported,
    or an exported function is not declared in the header;
  * with --frozen-header (abi_tests/frozen/max_c_1_0.h): a symbol of the library or of the
    list is in node MAX_1.0 but not declared in the frozen 1.0 header, a function the frozen
    header declares is not in MAX_1.0, or a symbol is in a node that is not MAX_1.y with
    y >= 1. This catches a new function that nobody named in its MAX_1.y node of
    cmake/max_c.map: the max_* wildcard of MAX_1.0 then exports it as name@@MAX_1.0, a
    version 1.0 libraries never had, and a program linked against it would load on a 1.0
    library and fail there at the first call.

Exit 2 means the check could not run (no nm, unreadable library).

Updating the list, when a function is added on purpose (a new MAX_1.y node in
cmake/max_c.map and the declaration in include/max_c.h):

    ninja -C build-abi && python3 abi_tests/scripts/check_exported_symbols.py \
        --library build-abi/libmax_c.so.1 --expected abi_tests/exported_symbols.txt --write

or `ninja -C build-abi abi_update_exported_symbols`. --write refuses to drop a symbol, to
record a non-max_* one or (with --frozen-header) one the library exports in the wrong version
node: removals are not updated away within major 1, and a function that fell into MAX_1.0's
wildcard is fixed in cmake/max_c.map, not recorded.

Only the Python standard library is used.
"""

import argparse
import difflib
import re
import shutil
import subprocess
import sys

VERSION_NODE = re.compile(r"^MAX_\d+\.\d+$")
HEADER_FUNCTION = re.compile(r"\bMAX_API\b[^;()]*?\b(max_[A-Za-z0-9_]+)\s*\(", re.S)


def exported_symbols(nm, library):
    """Returns (symbols as name@@VERSION, version nodes) of the library's defined dynamic symbols."""
    # Versions (name@@MAX_1.0) are shown by default since binutils 2.35; older nm needs
    # --with-symbol-versions, which a future one may drop: try both.
    out, detail = None, ""
    for flags in (["--with-symbol-versions"], []):
        try:
            out = subprocess.run([nm, "-D", "--defined-only", *flags, library],
                                 check=True, capture_output=True, text=True).stdout
            break
        except (OSError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", "") or str(e)
    if out is None:
        sys.stderr.write(f"error: could not read the dynamic symbols of {library}: {detail}\n")
        sys.exit(2)
    symbols, nodes = [], []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        kind, name = fields[-2], fields[-1]
        # A version node is an absolute symbol: "MAX_1.0" from GNU nm, "MAX_1.0@@MAX_1.0"
        # from llvm-nm (clang's toolchain).
        if kind == "A" and VERSION_NODE.match(base_name(name)):
            nodes.append(name)
        else:
            symbols.append(name)
    return sorted(set(symbols)), sorted(nodes)


def read_list(path):
    with open(path, encoding="utf-8") as f:
        lines = [l.strip() for l in f]
    return [l for l in lines if l and not l.startswith("#")]


def base_name(symbol):
    return symbol.split("@", 1)[0]


def header_functions(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # comments may mention MAX_API
    text = re.sub(r"//[^\n]*", " ", text)
    return sorted(set(HEADER_FUNCTION.findall(text)))


FROZEN_NODE = "MAX_1.0"
NODE_VERSION = re.compile(r"^MAX_(\d+)\.(\d+)$")


def split_version(symbol):
    """("name", "MAX_1.0") for name@@MAX_1.0 or name@MAX_1.0; ("name", None) without one."""
    name, _, version = symbol.partition("@")
    return name, version.lstrip("@") or None


def frozen_node_problems(symbols, frozen, frozen_header, where):
    """The version-node rule: MAX_1.0 holds exactly the functions of the frozen 1.0 header,
    and every other max_* symbol is in a later node MAX_1.y (y >= 1)."""
    problems = []
    in_frozen_node = set()
    for s in symbols:
        name, version = split_version(s)
        if not name.startswith("max_") or version is None:
            continue  # reported by the other checks
        if version == FROZEN_NODE:
            in_frozen_node.add(name)
            if name not in frozen:
                problems.append(
                    f"WRONG NODE: {s} ({where}) is in {FROZEN_NODE} but not declared in the frozen "
                    f"1.0 header {frozen_header}: name it in the MAX_1.y node of the version that "
                    f"adds it in cmake/max_c.map (it fell into {FROZEN_NODE}'s max_* wildcard)")
            continue
        if name in frozen:
            problems.append(
                f"WRONG NODE: {s} ({where}) is declared in the frozen 1.0 header {frozen_header} "
                f"but is not in {FROZEN_NODE}: 1.0 programs bind {name}@@{FROZEN_NODE}")
            continue
        m = NODE_VERSION.match(version)
        if not m or int(m.group(1)) != 1 or int(m.group(2)) < 1:
            problems.append(
                f"WRONG NODE: {s} ({where}) is in node {version}; a function added after 1.0 "
                "belongs in a later node MAX_1.y (y >= 1) of cmake/max_c.map")
    return problems, in_frozen_node


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", required=True, help="the built libmax_c.so.1")
    parser.add_argument("--expected", required=True, help="abi_tests/exported_symbols.txt")
    parser.add_argument("--header", help="include/max_c.h: also compare with its declarations")
    parser.add_argument("--frozen-header",
                        help="abi_tests/frozen/max_c_1_0.h: MAX_1.0 must hold exactly its functions")
    parser.add_argument("--nm", default=shutil.which("nm") or "nm", help="the nm to use")
    parser.add_argument("--write", action="store_true",
                        help="record the library's symbols as the new list (additions only)")
    args = parser.parse_args()

    actual, nodes = exported_symbols(args.nm, args.library)
    try:
        expected = read_list(args.expected)
    except OSError as e:
        if not args.write:
            sys.stderr.write(f"error: cannot read the committed list: {e}\n")
            return 2
        expected = []

    problems = []
    not_max = [s for s in actual if not base_name(s).startswith("max_")]
    for s in not_max:
        problems.append(f"exported symbol that is not max_*: {s} "
                        "(hide it: -fvisibility=hidden and the version script's local: *)")
    for s in actual:
        if base_name(s).startswith("max_") and "@" not in s:
            problems.append(f"max_* symbol without a version: {s} "
                            "(is cmake/max_c.map applied with --version-script?)")
    removed = sorted(set(expected) - set(actual))
    added = sorted(set(actual) - set(expected) - set(not_max))
    for s in removed:
        moved = [a for a in actual if base_name(a) == base_name(s)]
        where = f" (now exported as {', '.join(moved)})" if moved else ""
        problems.append(f"REMOVED: {s} is in the committed list but not exported{where}: "
                        "programs linked against it no longer load")
    for s in added:
        problems.append(f"ADDED: {s} is exported but not in the committed list "
                        f"{args.expected}: if the addition is intended, record it with --write")
    if args.header:
        declared = header_functions(args.header)
        exported_names = {base_name(s) for s in actual}
        for name in declared:
            if name not in exported_names:
                problems.append(f"declared in {args.header} but not exported: {name}")
        for name in sorted(exported_names - set(declared)):
            if name.startswith("max_"):
                problems.append(f"exported but not declared in {args.header}: {name}")
    if args.frozen_header:
        frozen = set(header_functions(args.frozen_header))
        if not frozen:
            problems.append(f"no function declarations found in {args.frozen_header}")
        lib_problems, lib_frozen = frozen_node_problems(actual, frozen, args.frozen_header,
                                                        "exported by the library")
        list_problems, _ = frozen_node_problems(expected, frozen, args.frozen_header,
                                                f"recorded in {args.expected}")
        problems += lib_problems + list_problems
        for name in sorted(frozen - lib_frozen):
            if not any(split_version(s)[0] == name for s in actual):
                problems.append(f"WRONG NODE: {name} is declared in the frozen 1.0 header "
                                f"{args.frozen_header} but not exported at all")
    if expected != sorted(expected):
        problems.append(f"{args.expected} is not sorted (regenerate it with --write)")

    print(f"{args.library}: {len(actual)} exported symbols, version nodes {', '.join(nodes) or '(none)'}; "
          f"committed list: {len(expected)} symbols")
    if args.write:
        blocking = [p for p in problems if p.startswith(("REMOVED", "exported symbol that is not",
                                                          "max_* symbol without"))
                    or (p.startswith("WRONG NODE") and "exported by the library" in p)]
        if blocking:
            print("refusing to --write the list:")
            for p in blocking:
                print("  " + p)
            return 1
        with open(args.expected, "w", encoding="utf-8") as f:
            f.write("".join(s + "\n" for s in actual))
        print(f"wrote {len(actual)} symbols to {args.expected} "
              f"({len(added)} added: {', '.join(added) or 'none'})")
        return 0

    if not problems:
        print("OK: the exported symbols match the committed list")
        return 0
    print(f"FAILED: {len(problems)} problem(s) with the exported symbols")
    for p in problems:
        print("  " + p)
    diff = list(difflib.unified_diff(expected, actual, fromfile=f"committed {args.expected}",
                                     tofile=f"exported by {args.library}", lineterm=""))
    if diff:
        print("diff (committed -> built):")
        for line in diff:
            print("  " + line)
    return 1


if __name__ == "__main__":
    sys.exit(main())
