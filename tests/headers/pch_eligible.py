#!/usr/bin/env python3
"""Which public headers may use the one-header tests' precompiled header (tests/pch/header_pch.hpp).

The PCH holds <nlohmann/json.hpp>. Under it, a header that uses nlohmann's full type while it includes only
<ania/json_fwd.hpp> would compile, so a header may use the PCH only when it reaches <nlohmann/json.hpp> through
its own includes anyway: then the PCH hides nothing. Prints the eligible headers, one per line.

usage: pch_eligible.py INCLUDE_DIR HEADER...
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>')
DIRECTIVE = re.compile(r'^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)')


def direct_includes(path):
    """The <...> includes of a file that a header-only build takes: inside `#if ANIA_HEADER_ONLY` (the one-header
    tests are header-only) or `#else` of `#if !ANIA_HEADER_ONLY`, never inside any other #if block (it may not
    be taken)."""
    taken, out = [], []  # one flag per open #if: is this branch taken in the one-header tests?
    for line in path.read_text(encoding='utf-8').splitlines():
        d = DIRECTIVE.match(line)
        if d:
            kind, cond = d.group(1), d.group(2).split('//')[0].strip()
            if kind.startswith('if'):
                header_only = kind == 'if' and cond == 'ANIA_HEADER_ONLY'
                compiled = kind == 'if' and cond == '!ANIA_HEADER_ONLY'
                taken.append(True if header_only else 'else' if compiled else False)  # 'else': only its #else is
            elif kind == 'else' and taken:
                taken[-1] = taken[-1] == 'else'
            elif kind == 'elif' and taken:
                taken[-1] = False
            elif kind == 'endif' and taken:
                taken.pop()
            continue
        if all(t is True for t in taken):
            m = INCLUDE.match(line)
            if m:
                out.append(m.group(1))
    return out


def main():
    root = pathlib.Path(sys.argv[1])
    memo = {}

    def reaches_json(h, seen):
        if h == 'nlohmann/json.hpp':
            return True
        if h in memo:
            return memo[h]
        if h in seen or not (root / h).is_file():
            return False
        seen.add(h)
        memo[h] = any(reaches_json(i, seen) for i in direct_includes(root / h))
        return memo[h]

    for h in sys.argv[2:]:
        if reaches_json(h, set()):
            print(h)


if __name__ == '__main__':
    main()
