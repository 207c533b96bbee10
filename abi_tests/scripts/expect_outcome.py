#!/usr/bin/env python3
"""Runs a command and checks how it ends: the self-tests of the ABI checkers.

    expect_outcome.py --exit 1 --output-matches 'REMOVED: max_buffer_size' -- CMD ARGS...

Passes (exit 0) when CMD exits with the expected code (--exit N, or --exit nonzero) and its
combined stdout+stderr matches every --output-matches regular expression (Python syntax,
searched per whole output, MULTILINE). Otherwise it fails (exit 1) and says which part of
the expectation was not met, so a checker that fails for the wrong reason (a crash, a
missing tool) does not count as having caught the mutant.
"""

import argparse
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exit", required=True, help="expected exit code, or 'nonzero'")
    parser.add_argument("--output-matches", action="append", default=[], metavar="REGEX")
    parser.add_argument("--output-lacks", action="append", default=[], metavar="REGEX")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")

    try:
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        print(f"FAILED: cannot run {command[0]}: {e}")
        return 1
    output = proc.stdout
    print(f"$ {' '.join(command)}")
    print(output.rstrip())
    print(f"[exit {proc.returncode}]")

    problems = []
    if args.exit == "nonzero":
        if proc.returncode == 0:
            problems.append("expected a non-zero exit, got 0")
    elif proc.returncode != int(args.exit):
        problems.append(f"expected exit {args.exit}, got {proc.returncode}")
    for regex in args.output_matches:
        if not re.search(regex, output, re.M):
            problems.append(f"output does not match /{regex}/")
    for regex in args.output_lacks:
        if re.search(regex, output, re.M):
            problems.append(f"output matches /{regex}/, which it must not")
    if problems:
        print("SELF-TEST FAILED: " + "; ".join(problems))
        return 1
    print("self-test ok: the command ended as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
