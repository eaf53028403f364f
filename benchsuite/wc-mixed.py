#!/usr/bin/env python3
"""Makes the mixed UTF-8 text of the wc benchmark out of the generated ASCII text.

    wc-mixed.py SOURCE OUT [--size 640000000]

Every 200th line of SOURCE gets ` café 日本` (an accented word and a CJK word: non-ASCII in
one line of 200), every 37th line a tab, every 101st line a carriage return before its
newline; the result is cut after the last whole line within --size bytes. Real text is
mostly ASCII with some UTF-8; this is the shape issue 12's wc target is measured on.
"""
import argparse


def main():
    p = argparse.ArgumentParser()
    p.add_argument("source")
    p.add_argument("out")
    p.add_argument("--size", type=int, default=640_000_000)
    a = p.parse_args()
    total = 0
    with open(a.source, "rb") as src, open(a.out, "wb") as out:
        for i, line in enumerate(src):
            body = line.rstrip(b"\n")
            if i % 200 == 199:
                body += " café 日本".encode()
            if i % 37 == 36:
                body = b"\t" + body
            if i % 101 == 100:
                body += b"\r"
            body += b"\n"
            if total + len(body) > a.size:
                break
            out.write(body)
            total += len(body)
    print(f"{total} bytes in {a.out}")


if __name__ == "__main__":
    main()
