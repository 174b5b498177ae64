#!/usr/bin/python3
"""The libFuzzer dictionary of the scenario loader (fuzz/fuzz_scenario.cpp), from `fabsim list`:
every key and table name, every kind and choice, the collective names, the units and a little
TOML syntax. Written at build time by the fuzz preset, so it follows the kinds' own declarations.

  fuzz_dict.py FABSIM OUT.dict
"""
import re
import subprocess
import sys

UNITS = ["ps", "ns", "us", "ms", "s", "B", "KB", "kB", "KiB", "MB", "MiB", "GB", "GiB", "TB",
         "bps", "Kbps", "Mbps", "Gbps", "Tbps"]
SYNTAX = [" = ", "[", "]", "[[", "]]", "{", "}", ",", "\"", "'''", "\"\"\"", "\n", ".", "true",
          "false", "nan", "inf", "-inf", "+inf", "0", "-1", "1e300", "0x7fffffffffffffff",
          "9223372036854775807", "-9223372036854775808", "1979-05-27T07:32:00Z", "$size",
          "$collective", "#"]
# A key line of `fabsim list`: four spaces, a dotted key, its default, its doc, its [type].
KEY_LINE = re.compile(r"^    (\S+)\s+(.*)\[([^\]]*)\]\s*$")
# A kind line: two spaces, the kind's name, its description.
KIND_LINE = re.compile(r"^  ([a-z_0-9]+)\s{2,}\S")


def escape(token):
    out = []
    for ch in token.encode():
        if ch in (0x22, 0x5C):
            out.append("\\" + chr(ch))
        elif 0x20 <= ch < 0x7F:
            out.append(chr(ch))
        else:
            out.append(f"\\x{ch:02x}")
    return '"' + "".join(out) + '"'


def tokens(listing):
    found = set(UNITS) | set(SYNTAX)
    for line in listing.splitlines():
        m = KEY_LINE.match(line)
        if m:
            key, rest, kind = m.groups()
            parts = [re.sub(r"\[i\]$", "", p) for p in key.split(".")]
            found.update(parts)
            raw = key.split(".")
            for i in range(1, len(parts)):
                if "[i]" in raw[i - 1]:
                    break  # inside an array of tables: its header is [[...]] below
                found.add("[" + ".".join(parts[:i]) + "]")
            if key.endswith("[i]") or "[i]." in key:
                # An array of tables: [[faults.events]], [[workload.jobs.ops]], ...
                head = []
                for p in key.split("."):
                    head.append(re.sub(r"\[i\]$", "", p))
                    if p.endswith("[i]"):
                        found.add("[[" + ".".join(head) + "]]")
            found.add(parts[-1] + " = ")
            found.update(re.findall(r'"([^"]+)"', kind))  # one of "a", "b"
            if key.endswith(".type"):  # the collective names in the op type's doc
                found.update(re.findall(r"[a-z_]{4,}", rest))
            continue
        m = KIND_LINE.match(line)
        if m:
            found.add(m.group(1))
    return sorted(found)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    listing = subprocess.run([sys.argv[1], "list"], check=True, capture_output=True,
                             text=True).stdout
    words = tokens(listing)
    if len(words) < 100:
        sys.exit(f"fuzz_dict.py: only {len(words)} tokens from `fabsim list`: has its format changed?")
    with open(sys.argv[2], "w", encoding="ascii") as f:
        f.write("# fuzz/fuzz_scenario.cpp's dictionary, written by tools/fuzz_dict.py\n")
        for w in words:
            f.write(escape(w) + "\n")


if __name__ == "__main__":
    main()
