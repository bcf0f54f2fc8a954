#!/usr/bin/python3
"""The code's shape, as issue 22 and STYLE.md ask it: no function over 80 lines
and no .cc file over 600 lines, outside generated code and tests.

Functions and their extents come from universal-ctags (--fields=+ne), which
reads C++ declarations without building. Lines count from the line of the
signature to the closing brace.

usage: code_shape.py [--max_function=80] [--max_file=600] [--list]
Exit 1 listing every offender; with --list, print every function over the
limit and exit 0 (a report, for reviews).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXCLUDED_PARTS = ("tests/", "/testing/", "_test.cc", "_test.h", "bench/", "fuzz/", "third_party/")


def sources():
    out = subprocess.run(["git", "ls-files", "*.cc", "*.h"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.split()
    return [p for p in out if not any(part in "/" + p for part in EXCLUDED_PARTS)]


def functions(paths):
    out = subprocess.run(["ctags", "--output-format=json", "--fields=+ne", "--kinds-C++=f",
                          "--language-force=C++", "-f", "-", *paths],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and "end" in tag:
            scope = tag.get("scope", "")
            name = f"{scope}::{tag['name']}" if scope else tag["name"]
            yield tag["path"], tag["line"], name, tag["end"] - tag["line"] + 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_function", type=int, default=80)
    parser.add_argument("--max_file", type=int, default=600)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    paths = sources()
    if not paths:
        sys.exit("code_shape: no sources found")
    long_functions = sorted((f for f in functions(paths) if f[3] > args.max_function),
                            key=lambda f: -f[3])
    long_files = []
    for p in paths:
        if p.endswith(".cc"):
            with open(os.path.join(ROOT, p), encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > args.max_file:
                long_files.append((p, n))
    for path, line, name, n in long_functions:
        print(f"{path}:{line}: {name} is {n} lines (at most {args.max_function})")
    for path, n in sorted(long_files, key=lambda f: -f[1]):
        print(f"{path}: {n} lines (at most {args.max_file})")
    print(f"code_shape: {len(paths)} files, {len(long_functions)} functions over "
          f"{args.max_function} lines, {len(long_files)} .cc files over {args.max_file} lines")
    if not args.list and (long_functions or long_files):
        sys.exit(1)


if __name__ == "__main__":
    main()
