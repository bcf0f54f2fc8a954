#!/usr/bin/python3
"""Writes a large offers file for load tests: the embedded offers copied into
synthetic regions ("us-east-1" -> "us-east-1-r7") until N offers, so a big
catalog keeps the real mix of GPUs, shapes, links, fabrics and prices.

    bench/make_catalog.py 10000 data/catalog/offers.textproto > /tmp/offers-10k.textproto
"""
import re
import sys


def main():
    count, source = int(sys.argv[1]), sys.argv[2]
    text = open(source, encoding="utf-8").read()
    header_end = text.index("\noffers {")
    blocks = re.findall(r"^offers \{.*?^\}", text[header_end:], flags=re.S | re.M)
    out = [text[:header_end].rstrip("\n"), ""]
    copy = 0
    while len(out) - 2 < count:
        for block in blocks:
            if len(out) - 2 >= count:
                break
            if copy:
                block = re.sub(r'(region: ")([^"]*)(")', rf"\g<1>\g<2>-r{copy}\g<3>", block)
                block = re.sub(r'(id: "[^"]*)(")', rf"\g<1>-r{copy}\g<2>", block)
            out.append(block)
        copy += 1
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
