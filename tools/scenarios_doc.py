#!/usr/bin/python3
"""docs/SCENARIOS.md's "Every key" block is the output of `fabsim list` (issue 13: the doc and
the registries' declarations cannot drift).

  scenarios_doc.py FABSIM            check: exit 1 with a diff when the block differs
  scenarios_doc.py FABSIM --update   rewrite the block from `fabsim list`
"""
import difflib
import pathlib
import subprocess
import sys

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "SCENARIOS.md"
HEADING = "## Every key (output of `fabsim list`)"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    listing = subprocess.run([sys.argv[1], "list"], check=True, capture_output=True,
                             text=True).stdout
    text = DOC.read_text()
    start = text.index(HEADING)
    open_fence = text.index("```\n", start) + 4
    close_fence = text.index("```\n", open_fence)
    current = text[open_fence:close_fence]
    if "--update" in sys.argv[2:]:
        DOC.write_text(text[:open_fence] + listing + text[close_fence:])
        print(f"{DOC}: block rewritten from `fabsim list`")
        return 0
    if current == listing:
        print("docs/SCENARIOS.md matches `fabsim list`: 1 passed, 0 failed")
        return 0
    diff = difflib.unified_diff(current.splitlines(), listing.splitlines(), "docs/SCENARIOS.md",
                                "fabsim list", lineterm="", n=0)
    print("\n".join(list(diff)[:60]), file=sys.stderr)
    print("docs/SCENARIOS.md differs from `fabsim list`: regenerate with "
          "tools/scenarios_doc.py build/release/apps/fabsim/fabsim --update", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
