#!/usr/bin/python3
"""compare_introspection.py EXPECTED ACTUAL INTERFACE...

Whether each named interface has the same methods, signals and properties
(names, argument names, types and directions, access, annotations) in the
two introspection XML files; prints the differences and exits 1 if any.
The order of members and all comments and whitespace do not matter.
"""
import sys
import xml.etree.ElementTree as ElementTree


def members(path, name):
    root = ElementTree.parse(path).getroot()
    for interface in root.iter("interface"):
        if interface.get("name") == name:
            found = set()
            for member in interface:
                arguments = tuple((a.get("name"), a.get("type"), a.get("direction", "in" if member.tag == "method" else None))
                                  for a in member.findall("arg"))
                annotations = tuple(sorted((a.get("name"), a.get("value")) for a in member.findall("annotation")))
                found.add((member.tag, member.get("name"), member.get("type"), member.get("access"), arguments, annotations))
            return found
    return None


def main(expected, actual, names):
    failed = False
    for name in names:
        want, got = members(expected, name), members(actual, name)
        if want is None or got is None:
            print("%s: missing in %s" % (name, expected if want is None else actual))
            failed = True
            continue
        for member in sorted(want - got, key=str):
            print("%s: only in %s: %s" % (name, expected, member))
            failed = True
        for member in sorted(got - want, key=str):
            print("%s: only in %s: %s" % (name, actual, member))
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
