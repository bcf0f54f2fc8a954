#!/usr/bin/python3
"""Writes a large, realistically diverse offers file for load tests.

    bench/make_catalog.py 10000 data/catalog/offers.textproto > /tmp/offers-10k.textproto

Starting from the embedded offers (the real mix of GPUs, links, fabrics and
providers), it adds what a catalog imported from every provider and region
looks like, rather than copies of one list:
  - regions: each copy of an offer lands in another region of its provider
    ("us-east-1" -> "us-east-1-r7"), the way SkyPilot's AWS catalog repeats a
    shape over ~30 regions and their zones;
  - prices: regional prices differ; each copy's prices are scaled by a factor
    drawn from 0.85..1.25 (spot independently, so spot discounts vary too);
  - shapes: 8-GPU boards are also sold as 1-, 2- and 4-GPU slices (price,
    vCPUs and RAM pro rata), as on GCP, Azure and the GPU clouds;
  - providers: from the second copy on, one offer in five moves to one of a
    few marketplace hosts ("market-03"), priced by the pricing service's
    default billing rule, as Vast.ai-style marketplaces bring many sellers.
The output is deterministic for a given count and source file.
"""
import random
import re
import sys

MARKET_HOSTS = 12


def blocks_of(text):
    header_end = text.index("\noffers {")
    blocks = re.findall(r"^offers \{.*?^\}", text[header_end:], flags=re.S | re.M)
    return text[:header_end].rstrip("\n"), blocks


def field(block, name):
    m = re.search(r"(?<![\w])%s: (\S+)" % name, block)
    return m.group(1).strip('"') if m else None


def scale_number(block, name, factor, integer=False):
    def repl(m):
        value = float(m.group(2)) * factor
        return m.group(1) + (str(int(round(value))) if integer else "%.4g" % value)
    return re.sub(r"((?<![\w])%s: )([0-9.eE+-]+)" % name, repl, block)


def set_string(block, name, value):
    return re.sub(r'((?<![\w])%s: ")[^"]*(")' % name, lambda m: m.group(1) + value + m.group(2), block)


def slices(block):
    """The 1-, 2- and 4-GPU slices of an 8-GPU offer (none for other shapes)."""
    gpus = field(block, "gpus_per_node")
    if gpus != "8":
        return []
    out = []
    for n in (1, 2, 4):
        b = re.sub(r"((?<![\w])gpus_per_node: )8", r"\g<1>%d" % n, block)
        for name, integer in (("on_demand_usd_per_hour", False), ("spot_usd_per_hour", False),
                              ("spot_min_usd_per_hour", False), ("spot_max_usd_per_hour", False),
                              ("reserved_usd_per_hour", False), ("vcpus", True),
                              ("ram_bytes", True), ("local_disk_bytes", True)):
            b = scale_number(b, name, n / 8.0, integer)
        instance = field(b, "instance_type")
        b = set_string(b, "instance_type", "%s-%dgpu" % (instance, n))
        if n == 1:  # one GPU: no intra-node link, no cluster
            b = re.sub(r"((?<![\w])link: )\S+", r"\1LINK_TYPE_NONE", b)
            b = re.sub(r"((?<![\w])max_nodes: )\d+", r"\g<1>1", b)
        out.append(b)
    return out


def variant(block, copy, rng):
    """The copy-th regional variant of an offer."""
    b = block
    provider = field(b, "provider")
    if copy >= 2 and rng.random() < 0.2:
        provider = "market-%02d" % rng.randrange(MARKET_HOSTS)
        b = set_string(b, "provider", provider)
    region = "%s-r%d" % (field(b, "region"), copy)
    b = set_string(b, "region", region)
    b = scale_number(b, "on_demand_usd_per_hour", rng.uniform(0.85, 1.25))
    b = scale_number(b, "reserved_usd_per_hour", rng.uniform(0.85, 1.25))
    spot = rng.uniform(0.85, 1.25)  # the zone statistics move with the median
    for name in ("spot_usd_per_hour", "spot_min_usd_per_hour", "spot_max_usd_per_hour"):
        b = scale_number(b, name, spot)
    return b


def with_id(block):
    ident = "%s/%s/%s" % (field(block, "provider"), field(block, "instance_type"), field(block, "region"))
    return set_string(block, "id", ident)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    count, source = int(sys.argv[1]), sys.argv[2]
    header, originals = blocks_of(open(source, encoding="utf-8").read())
    if not originals:
        sys.exit("make_catalog: no offers in " + source)
    base = list(originals)
    for block in originals:
        base.extend(slices(block))
    rng = random.Random(count)
    out, seen, copy = [], set(), 0
    while len(out) < count:
        for block in base:
            if len(out) >= count:
                break
            b = with_id(block if copy == 0 else variant(block, copy, rng))
            ident = field(b, "id")
            if ident in seen:
                continue
            seen.add(ident)
            out.append(b)
        copy += 1
    sys.stdout.write(header + "\n\n" + "\n".join(out) + "\n")


if __name__ == "__main__":
    main()
