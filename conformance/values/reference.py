#!/usr/bin/env python3
"""Independent reference for the RCVE v1 and presentation JSON fixtures (spec section 3.3).

This shares no code with the Rust implementation: it encodes values with Python's own integers,
struct, hashlib and shortest-repr floats, and writes the expected columns (rcve_hex, json,
sha256) of every fixture from the cases listed below.

    python3 conformance/values/reference.py          # rewrite v1/*.json and v1/invalid/*.json
    python3 conformance/values/reference.py --check  # fail if any file differs from the cases
"""

import decimal
import hashlib
import json
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
TAGS = ("$bytes", "$float", "$object")


class F(float):
    """A Number written as {"$float": text} in the fixtures (for spellings JSON cannot carry
    faithfully, such as -0.0)."""

    def __new__(cls, text):
        value = super().__new__(cls, float(text))
        value.text = text
        return value


# ---------------------------------------------------------------- RCVE v1

def leb128(n):
    out = bytearray()
    while True:
        group, n = n & 0x7F, n >> 7
        if n:
            out.append(group | 0x80)
        else:
            out.append(group)
            return bytes(out)


def rcve(v):
    if v is None:
        return b"\x00"
    if v is True:
        return b"\x02"
    if v is False:
        return b"\x01"
    if isinstance(v, int):
        assert -(2**63) <= v < 2**63, v
        zigzag = 2 * v if v >= 0 else -2 * v - 1
        return b"\x10" + leb128(zigzag)
    if isinstance(v, float):
        assert v == v and v not in (float("inf"), float("-inf")), v
        return b"\x11" + struct.pack(">d", 0.0 if v == 0 else float(v))
    if isinstance(v, str):
        raw = v.encode("utf-8")  # raises on lone surrogates
        return b"\x20" + leb128(len(raw)) + raw
    if isinstance(v, bytes):
        return b"\x21" + leb128(len(v)) + v
    if isinstance(v, list):
        return b"\x30" + leb128(len(v)) + b"".join(rcve(x) for x in v)
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-8"))
        return b"\x31" + leb128(len(v)) + b"".join(rcve(k) + rcve(v[k]) for k in keys)
    raise TypeError(type(v))


# ---------------------------------------------------------------- presentation JSON

class NotRepresentable(Exception):
    pass


def number_text(x):
    """ECMAScript Number::toString from Python's shortest round-trip digits."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digits, exponent = decimal.Decimal(repr(abs(float(x)))).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    s = "".join(map(str, digits))
    k = len(s)
    n = exponent + k
    if k <= n <= 21:
        body = s + "0" * (n - k)
    elif 0 < n <= 21:
        body = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + s
    else:
        e = n - 1
        exp = ("+" if e > 0 else "-") + str(abs(e))
        body = (s if k == 1 else s[0] + "." + s[1:]) + "e" + exp
    return sign + body


SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def string_text(s):
    out = ['"']
    for ch in s:
        if ch in SHORT:
            out.append(SHORT[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def presentation(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return number_text(v)
    if isinstance(v, str):
        return string_text(v)
    if isinstance(v, bytes):
        raise NotRepresentable()
    if isinstance(v, list):
        return "[" + ",".join(presentation(x) for x in v) + "]"
    keys = sorted(v, key=lambda k: k.encode("utf-8"))
    return "{" + ",".join(string_text(k) + ":" + presentation(v[k]) for k in keys) + "}"


# ---------------------------------------------------------------- tagged JSON

def tagged(v):
    if isinstance(v, F):
        return {"$float": v.text}
    if isinstance(v, bytes):
        return {"$bytes": v.hex()}
    if isinstance(v, list):
        return [tagged(x) for x in v]
    if isinstance(v, dict):
        inner = {k: tagged(x) for k, x in v.items()}
        if len(v) == 1 and next(iter(v)) in TAGS:
            return {"$object": inner}
        return inner
    return v


def case(name, value):
    try:
        text = presentation(value)
    except NotRepresentable:
        text = None
    encoded = rcve(value)
    return {
        "name": name,
        "value": tagged(value),
        "rcve_hex": encoded.hex(),
        "json": text,
        "sha256": hashlib.sha256(encoded).hexdigest(),
    }


# ---------------------------------------------------------------- the cases

def scalars():
    yield "null", None
    yield "false", False
    yield "true", True
    for n in [0, 1, -1, 2, 63, -64, 64, -65, 127, 128, 255, 256, 8191, 8192, -8192, -8193,
              2**31 - 1, -(2**31), 2**32, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1,
              2**62, -(2**62), 2**63 - 1, -(2**63)]:
        yield "integer %d" % n, n


def numbers():
    yield "number 0.1", 0.1
    yield "number 1e21", 1e21
    yield "number 1e20", 1e20
    yield "number 999999999999999900000", 999999999999999900000.0
    yield "number -0.0 normalizes to 0", F("-0.0")
    yield "number 0.0", 0.0
    yield "number 1.0 presents as 1", 1.0
    yield "number -1.5", -1.5
    yield "number 100.0", 100.0
    yield "number 0.000001", 0.000001
    yield "number 1e-7", 1e-7
    yield "number 9.999999999999997e-7", 9.999999999999997e-7
    yield "smallest subnormal", 5e-324
    yield "negative smallest subnormal", -5e-324
    yield "largest subnormal", 2.225073858507201e-308
    yield "smallest normal", 2.2250738585072014e-308
    yield "largest finite", 1.7976931348623157e308
    yield "most negative finite", -1.7976931348623157e308
    yield "number 2^53 as float", 9007199254740992.0
    yield "number 2^53+1 rounds to 2^53", F("9007199254740993.0")
    yield "number 2^63 as float", 9223372036854775808.0
    yield "number 1e23", 1e23
    yield "number 333333333.3333333", 333333333.3333333
    yield "number -0.0000033333333333333333", -0.0000033333333333333333
    yield "number 1424953923781206.2", 1424953923781206.2
    yield "number 295147905179352830000", 295147905179352830000.0
    yield "number 0.30000000000000004", 0.1 + 0.2
    yield "number 123e-20", 123e-20
    yield "number 4.35", 4.35
    yield "number 1e-6 boundary", 1e-6
    yield "number 1e+22", 1e22


def strings():
    yield "empty string", ""
    yield "ascii", "hello, world"
    yield "quote", '"'
    yield "backslash", "\\"
    yield "slash is not escaped", "a/b"
    for ch, label in [("\b", "backspace"), ("\t", "tab"), ("\n", "newline"), ("\f", "form feed"),
                      ("\r", "carriage return")]:
        yield "escape " + label, "x" + ch + "y"
    yield "escape U+0000", "\x00"
    yield "escape U+001F", "\x1f"
    yield "escape U+000B", "\x0b"
    yield "every control character", "".join(chr(c) for c in range(0x20))
    yield "every json escape at once", '"\\/\b\f\n\r\t\x00\x1f'
    yield "DEL is not escaped", "\x7f"
    yield "U+2028 and U+2029 are not escaped", "\u2028\u2029"
    yield "two-byte utf-8", "é"
    yield "three-byte utf-8", "€"
    yield "four-byte utf-8", "😀"
    yield "U+FFFF", "\uffff"
    yield "U+10FFFF", "\U0010ffff"
    yield "mixed scripts", "Grüße, 世界! 👋🏽"
    yield "string that looks like a tag", "$bytes"


def bytes_cases():
    yield "empty bytes", b""
    yield "one zero byte", b"\x00"
    yield "byte 0xff", b"\xff"
    yield "all 256 octets", bytes(range(256))
    yield "128 bytes need a two-byte length", bytes(128)
    yield "bytes inside a list", [1, b"\x01\x02"]
    yield "bytes deep inside an object", {"a": {"b": [None, b"\xde\xad"]}}


def composites():
    yield "empty list", []
    yield "empty object", {}
    yield "nested empty", [[], {}, [[]]]
    yield "mixed list", [None, True, 1, 1.5, "s", [2], {"k": "v"}]
    yield "integer and number stay distinct", [1, 1.0]
    yield "object keys sorted by utf-8 bytes", {"b": 1, "a": 2, "B": 3, "": 4, "aa": 5}
    yield "nested objects with non-ascii keys", {
        "é": {"ñ": 1, "z": {"日本": [1, 2], "ß": None}},
        "😀": {"€": True},
        "e": "plain",
    }
    yield "utf-8 order differs from utf-16 order", {"\uffff": 1, "😀": 2, "\ue000": 3}
    yield "key with escapes", {"a\"b": 1, "tab\there": 2, "nul\x00": 3}
    yield "object with tag-like key", {"$bytes": "00"}
    yield "object with $float key", {"$float": 1}
    yield "object with $object key", {"$object": {}}
    yield "two keys including a tag name", {"$bytes": 1, "other": 2}
    yield "map with nested nulls", {"a": None, "b": {"c": None, "d": [None]}}
    yield "list of 128 elements", list(range(128))
    yield "deep nesting", [[[[[[[[[[["deep"]]]]]]]]]]]
    yield "call f(a, b) argument envelope", ["a", "b"]
    yield "call f({x: a}) argument envelope", [{"x": "a"}]


GROUPS = {
    "scalars": scalars,
    "numbers": numbers,
    "strings": strings,
    "bytes": bytes_cases,
    "composites": composites,
}

# Byte strings a decoder must reject, and the reason (the Rust DecodeErrorKind::reason names).
INVALID_RCVE = [
    ("empty input", "", "truncated"),
    ("integer without body", "10", "truncated"),
    ("leb128 continues past the end", "1080", "truncated"),
    ("number with 3 of 8 bytes", "11000000", "truncated"),
    ("string shorter than its length", "2005616263", "truncated"),
    ("list count beyond the input", "30ffffffff0f", "truncated"),
    ("redundant zero group", "108000", "non_minimal_leb128"),
    ("redundant zero group in a length", "20800000", "non_minimal_leb128"),
    ("leb128 wider than 64 bits", "10ffffffffffffffffff02", "leb128_overflow"),
    ("leb128 with an eleventh group", "10ffffffffffffffffff8100", "leb128_overflow"),
    ("unknown tag 0x03", "03", "unknown_tag"),
    ("unknown tag 0x12", "12", "unknown_tag"),
    ("unknown tag 0xff", "ff", "unknown_tag"),
    ("invalid utf-8", "2002c328", "invalid_utf8"),
    ("encoded surrogate", "2003eda080", "invalid_utf8"),
    ("overlong utf-8", "2002c0af", "invalid_utf8"),
    ("invalid utf-8 in a key", "31012001ff00", "invalid_utf8"),
    ("positive infinity", "117ff0000000000000", "non_finite_number"),
    ("negative infinity", "11fff0000000000000", "non_finite_number"),
    ("nan", "117ff8000000000000", "non_finite_number"),
    ("negative zero", "118000000000000000", "negative_zero"),
    ("key encoded as bytes", "3101210161", "key_not_string"),
    ("unsorted keys", "31022001620020016100", "unsorted_keys"),
    ("keys sorted by utf-16 instead of utf-8", "31022004f09f988000" + "2003efbfbf00", "unsorted_keys"),
    ("duplicate keys", "31022001610020016100", "duplicate_key"),
    ("trailing byte", "0000", "trailing_bytes"),
    ("two values", "02" + "1002", "trailing_bytes"),
    ("nesting deeper than 256", "3001" * 257 + "00", "too_deep"),
]


def invalid_cases():
    return [{"name": n, "rcve_hex": h, "error": e} for n, h, e in INVALID_RCVE]


def render(cases):
    lines = ",\n".join("  " + json.dumps(c, ensure_ascii=False, separators=(", ", ": ")) for c in cases)
    return "[\n" + lines + "\n]\n"


def main():
    check = "--check" in sys.argv[1:]
    files = {HERE / "v1" / (g + ".json"): render([case(n, v) for n, v in gen()]) for g, gen in GROUPS.items()}
    files[HERE / "v1" / "invalid" / "rcve.json"] = render(invalid_cases())
    stale = []
    for path, text in files.items():
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        sys.exit("out of date: " + ", ".join(str(p) for p in stale))


if __name__ == "__main__":
    main()
