#!/usr/bin/env python3
"""Compares a built libmax_c with the committed ABI baseline (libabigail's abidw/abidiff).

    check_abi_baseline.py --library build-abi/libmax_c.so.1 --headers-dir include \
        --baseline abi_tests/baseline/libmax_c.so.1.abi

The library is dumped with abidw (the flags in ABIDW_FLAGS, the same ones that wrote the
baseline) and compared with abidiff. abidiff's exit code is not enough: it sets bit 2
("ABI change") for anything to review, additions included, and bit 3 ("incompatible")
only for some breaks. So the report is parsed, and the check FAILS (exit 1) on any of:

  * a removed or changed function or variable ("Functions changes summary: R Removed,
    C Changed ..."; a changed struct reached from a function's parameters or return type
    shows up here as a changed function, with the struct's changes listed);
  * a removed function or variable symbol without debug info;
  * a changed SONAME or architecture;
  * abidiff's "incompatible" bit, or a change the parser could not classify;
  * a library without DWARF (no function declarations in the dump: build with -g, e.g.
    RelWithDebInfo, which is the default build type).

It PASSES on pure additions (new functions, new variables, new symbols), printing them,
and on a field appended to an options struct: a struct whose first member is
`size_t struct_size` (DESIGN §2) may grow at its end within a major version, since callers
built against the shorter struct pass the shorter size. abidiff reports that as a changed
function per function that reaches the struct; a changed function whose every change is
such a growth (new size, members inserted at or past the old size, nothing else) counts as
an addition instead.
Exit 2 means the tools could not run. Changes abidiff itself classes as harmless (and
counts as "filtered out") are shown but do not fail: an enumerator appended to an enum,
say, is allowed within a major version.

Refreshing the baseline on purpose. When an intentional addition lands (a new function in a
new MAX_1.y node, a field appended to an options struct together with its struct_size
handling), regenerate the baseline in the same change:

    ninja -C build-abi && python3 abi_tests/scripts/check_abi_baseline.py \
        --library build-abi/libmax_c.so.1 --headers-dir include \
        --baseline abi_tests/baseline/libmax_c.so.1.abi --write-baseline

(or `ninja -C build-abi abi_update_baseline`) and commit the new .abi file with it. The
baseline must come from a build with debug info on x86-64 (the default RelWithDebInfo
build-abi/, not the sanitizer build). --write-baseline first runs the check and refuses to
write when anything was removed or changed: the baseline is never regenerated to hide a
break. Only a new major version (a new SONAME, libmax_c.so.2) may pass
--allow-incompatible-update.

Only the Python standard library is used.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Stable dumps: no absolute paths (corpus, compilation dir), no source locations (so moving
# code around in a .cc does not touch the baseline), no DT_NEEDED, only what is exported
# and only the types the public headers define (the library's own C++ types stay out).
ABIDW_FLAGS = [
    "--no-corpus-path",
    "--no-comp-dir-path",
    "--no-show-locs",
    "--short-locs",
    "--no-elf-needed",
    "--exported-interfaces-only",
    "--drop-private-types",
    "--type-id-style", "hash",  # ids that do not renumber when a type is added: small diffs
]

SUMMARY = re.compile(
    r"^\s*(Functions|Variables) changes summary:\s*(\d+) Removed(?: \((\d+) filtered out\))?,"
    r"\s*(\d+) Changed(?: \((\d+) filtered out\))?,\s*(\d+) Added")
SYMBOL_SUMMARY = re.compile(
    r"^\s*(Function|Variable) symbols changes summary:\s*(\d+) Removed(?: \((\d+) filtered out\))?,"
    r"\s*(\d+) Added")
BREAKING_LINES = [
    (re.compile(r"SONAME changed", re.I), "the SONAME changed"),
    (re.compile(r"architecture changed", re.I), "the architecture changed"),
]


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        sys.stderr.write(f"error: cannot run {cmd[0]}: {e}\n")
        sys.exit(2)


def dump(abidw, library, headers_dir, out_path):
    cmd = [abidw, "--headers-dir", headers_dir, *ABIDW_FLAGS, "--out-file", out_path, library]
    proc = run(cmd)
    if proc.returncode != 0:
        sys.stderr.write(f"error: {' '.join(cmd)} failed ({proc.returncode}):\n"
                         f"{proc.stdout}{proc.stderr}")
        sys.exit(2)
    with open(out_path, encoding="utf-8") as f:
        text = f.read()
    if "<function-decl" not in text:
        sys.stderr.write(f"error: {library} has no debug info for its functions (abidw found "
                         "no function declarations): build it with -g, e.g. the default "
                         "RelWithDebInfo build type\n")
        sys.exit(1)
    return text


CHANGED_FUNCTION = re.compile(r"^\s*\[C\] 'function ")
ANY_ENTRY = re.compile(r"^\s*\[[ACD]\] |^\S")
GROWTH_LINES = [
    re.compile(r"^parameter \d+ of type '.*' has sub-type changes:$"),
    re.compile(r"^return type changed:$"),
    re.compile(r"^in pointed to type '(?:typedef|const) .*':$"),
    re.compile(r"^(?:underlying type|in unqualified underlying type) '.*' changed:$"),
    re.compile(r"^\d+ data member insertions?:$"),
]
STRUCT_CHANGED = re.compile(r"^underlying type 'struct (\w+)' changed:$")
SIZE_CHANGED = re.compile(r"^type size changed from (\d+) to (\d+) \(in bits\)$")
MEMBER_AT = re.compile(r"^'.*', at offset (\d+) \(in bits\)$")


def options_structs(header_text):
    """The structs of the public header whose first member is size_t struct_size."""
    return set(re.findall(r"struct (\w+) \{\s*size_t struct_size;", header_text))


def is_options_growth(block, growable):
    """Whether one changed function's report block is only appended options-struct fields."""
    struct, old_size, grew = None, None, False
    for line in (raw.strip() for raw in block[1:]):
        if not line:
            continue
        m = STRUCT_CHANGED.match(line)
        if m:
            struct = m.group(1)
            continue
        m = SIZE_CHANGED.match(line)
        if m:
            old_size = int(m.group(1))
            if int(m.group(2)) <= old_size:
                return False
            continue
        m = MEMBER_AT.match(line)
        if m:
            if old_size is None or int(m.group(1)) < old_size:
                return False
            grew = True
            continue
        if not any(p.match(line) for p in GROWTH_LINES):
            return False
    return grew and struct in growable


def count_options_growth(report, growable):
    """How many changed functions in the report only see options structs grow."""
    blocks, current = [], None
    for line in report.splitlines():
        if CHANGED_FUNCTION.match(line):
            current = [line]
            blocks.append(current)
        elif ANY_ENTRY.match(line):
            current = None
        elif current is not None:
            current.append(line)
    return sum(is_options_growth(b, growable) for b in blocks)


def classify(report, rc, growable=frozenset()):
    """Returns (breaks, additions, notes) found in an abidiff report. `growable` names the
    options structs that may grow at their end (options_structs of the header)."""
    breaks, additions, notes = [], [], []
    grown = count_options_growth(report, growable)
    seen_summary = False
    for line in report.splitlines():
        m = SUMMARY.match(line)
        if m:
            seen_summary = True
            what, removed, rem_filtered, changed, chg_filtered, added = m.groups()
            removed, changed, added = int(removed), int(changed), int(added)
            if removed:
                breaks.append(f"{removed} {what.lower()} removed")
            if what == "Functions" and grown:
                changed -= grown
                additions.append(f"{grown} function(s) whose options struct grew at its end")
            if changed:
                breaks.append(f"{changed} {what.lower()} changed")
            if added:
                additions.append(f"{added} {what.lower()} added")
            for count, kind in ((rem_filtered, "removals"), (chg_filtered, "changes")):
                if count and int(count):
                    notes.append(f"{count} {what.lower()} {kind} abidiff filtered out as harmless")
            continue
        m = SYMBOL_SUMMARY.match(line)
        if m:
            seen_summary = True
            what, removed, _filtered, added = m.groups()
            if int(removed):
                breaks.append(f"{removed} {what.lower()} symbol(s) removed")
            if int(added):
                additions.append(f"{added} {what.lower()} symbol(s) added")
            continue
        for pattern, why in BREAKING_LINES:
            if pattern.search(line):
                breaks.append(why)
    if rc & 8:
        breaks.append("abidiff flagged an incompatible change")
    if rc & 4 and not breaks and not additions:
        breaks.append("abidiff reported an ABI change the checker could not classify "
                      f"(exit {rc}, summary lines {'seen' if seen_summary else 'missing'})")
    return breaks, additions, notes


def compare(args, baseline, current_abi):
    cmd = [args.abidiff, baseline, current_abi]
    proc = run(cmd)
    if proc.returncode & 3:
        sys.stderr.write(f"error: {' '.join(cmd)} failed (exit {proc.returncode}):\n"
                         f"{proc.stdout}{proc.stderr}")
        sys.exit(2)
    return proc.returncode, proc.stdout + proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", help="the built libmax_c.so.1")
    parser.add_argument("--baseline", help="abi_tests/baseline/libmax_c.so.1.abi")
    parser.add_argument("--headers-dir", help="the public headers (include/)")
    parser.add_argument("--abidw", default=shutil.which("abidw") or "abidw")
    parser.add_argument("--abidiff", default=shutil.which("abidiff") or "abidiff")
    parser.add_argument("--write-baseline", action="store_true",
                        help="regenerate the baseline from the library (additions only)")
    parser.add_argument("--allow-incompatible-update", action="store_true",
                        help="with --write-baseline: also when the ABI broke (new major only)")
    parser.add_argument("--skip", metavar="REASON",
                        help="do nothing and exit 77 (CTest's SKIP_RETURN_CODE)")
    args = parser.parse_args()

    if args.skip:
        print(f"SKIPPED: {args.skip}")
        return 77
    for required in ("library", "baseline", "headers_dir"):
        if not getattr(args, required):
            parser.error(f"--{required.replace('_', '-')} is required")
    for tool in (args.abidw, args.abidiff):
        if not shutil.which(tool):
            sys.stderr.write(f"error: {tool} not found: install libabigail's tools "
                             "(Debian/Ubuntu: apt-get install abigail-tools)\n")
            return 2

    with tempfile.TemporaryDirectory(prefix="max_c_abi.") as tmp:
        current = os.path.join(tmp, "current.abi")
        current_text = dump(args.abidw, args.library, args.headers_dir, current)
        have_baseline = os.path.exists(args.baseline)
        if have_baseline:
            rc, report = compare(args, args.baseline, current)
            with open(os.path.join(args.headers_dir, "max_c.h"), encoding="utf-8") as f:
                growable = options_structs(f.read())
            breaks, additions, notes = classify(report, rc, growable)
        elif args.write_baseline:
            rc, report, breaks, additions, notes = 0, "", [], ["a first baseline"], []
        else:
            sys.stderr.write(f"error: no baseline at {args.baseline} (create it with "
                             "--write-baseline)\n")
            return 2

        print(f"abidiff {args.baseline} <dump of {args.library}>: exit {rc}")
        if report.strip():
            print("---- abidiff report ----")
            print(report.rstrip())
            print("------------------------")

        if args.write_baseline:
            if breaks and not args.allow_incompatible_update:
                print("REFUSED: not regenerating the baseline over an incompatible change:")
                for b in breaks:
                    print("  " + b)
                print("Restore the removed/changed interface instead (or add a _v2 function). "
                      "Only a new major version may pass --allow-incompatible-update.")
                return 1
            with open(args.baseline, "w", encoding="utf-8") as f:
                f.write(current_text)
            print(f"wrote {args.baseline} ({', '.join(additions) or 'no ABI change'})")
            return 0

        for n in notes:
            print("note: " + n)
        if breaks:
            print("FAILED: the ABI differs incompatibly from the committed baseline:")
            for b in breaks:
                print("  " + b)
            print("Within major 1 only additions are allowed (DESIGN §2). See the abidiff "
                  "report above for which functions and types changed.")
            return 1
        if additions:
            print(f"OK: compatible with the baseline; additions: {', '.join(additions)}. "
                  "Refresh the baseline in the change that adds them (see --write-baseline).")
        else:
            print("OK: no ABI change against the baseline")
        return 0


if __name__ == "__main__":
    sys.exit(main())
