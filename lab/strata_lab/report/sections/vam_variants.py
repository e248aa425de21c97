"""Vam's design decisions one at a time (Vam 2005 §4.3, Table 2, Fig. 4 and 5):
what per-object headers and coarse size classes cost, each variant composed
from the layers (src/layered/vam_variants.hpp) and run as a preloaded malloc."""
from ...claims import Above, Claim, Source, Within, effect
from ..results import Results, Section
from . import program_pairs
from .program_pairs import PAGES, TIME
from .statistics import rate_why

BASE, HEADER, COARSE = "vam", "vam-header", "vam-coarse"
DESCRIPTION = (
    "Three heaps composed from the layers that differ in one decision each (src/layered/vam_variants.hpp). `vam`: "
    "objects up to 256 B without headers in per-class areas (AreaSegHeap: the bin is found from the address, "
    "BIBOP), classes every 16 B, reap-like allocation (bump through 8 KiB page blocks, then reuse the class's "
    "freed objects: FreelistHeap over ChunkHeap); larger objects in LeaHeap. `vam-header`: the same with a "
    "16-byte header on every small object (Vam_small+header; the paper's header is 8 bytes, strata aligns to "
    "16). `vam-coarse`: power-of-two classes 16-256 B (PHKmalloc's granularity: the paper's PHK_sc is the step "
    "from coarse to fine). Vam_bitmap (bitmaps instead of reap allocation; §4.3: a 2% increase in run time) has "
    "no counterpart and no claim: the layers have no bitmap heap, and composing one (a per-page bitmap searched on "
    "every allocation, PHKmalloc's) is a new layer with its own tests, not a composition of the existing ones. "
    "Ratios of each variant to `vam`, paired within a round; the paper normalises each variant to "
    "its original the same way. Cache misses (the paper's Fig. 4a/5a) are not measured here.")


def build(r: Results) -> Section:
    s = Section("vam-variants", "Vam's variants: headers and size classes (Vam Table 2, Fig. 4-5)")
    s.p(DESCRIPTION + " " + r.timing.why)
    e = next(iter(r.experiments("vam-variants")), None)
    if e is not None:
        program_pairs.absolute(r, s, e)
        program_pairs.figures(r, s, e, [(HEADER, BASE), (COARSE, BASE)], "vam-variants", "variant / vam")
    _header_claims(r, s, e)
    _class_claims(r, s, e)
    return s


def _header_claims(r: Results, s: Section, e) -> None:
    where = "§4.3, Fig. 5c"
    quote = ("Figures 5(a) and 5(c) show that adding headers to the small objects in Vam results in an average "
             "increase in L2 cache misses of 15% and a 3% increase in run times.")
    time = Claim("vam-variants.header-time", s.title, "Headers on small objects make programs slower on average",
                 Source("Vam 2005", where, quote), f"geometric mean over workloads of vam-header / vam {r.timing.name}",
                 Above(effect(0.03)), "+3% on average (margin: half of it, claims.effect)",
                 paper_value=1.03, why="strata's header is 16 bytes (its alignment), the paper's 8; and the stand-ins' objects and "
                     "working sets are not the SPEC programs' (see the Calibration section)")
    program_pairs.judge_average(r, s, time, e, HEADER, BASE, TIME)
    parser = Claim("vam-variants.header-parser", s.title,
                   "Headers slow down parser (small objects: 197.parser's stand-in)",
                   Source("Vam 2005", where, "The impact of adding headers is the greatest for 197.parser, "
                                             "increasing run time by 10%."),
                   f"vam-header / vam {r.timing.name} on parser", Above(effect(0.10)),
                   "+10% (margin: half of it, claims.effect)",
                   paper_value=1.10, why=rate_why(r, ["parser"], "but the headers cost through a working set larger than the cache, "
                                               "and parser's peak live set is far smaller than 197.parser's"))
    with_parser = dict(e, workloads=["parser"]) if e is not None and "parser" in e["workloads"] else None
    program_pairs.judge_every(r, s, parser, with_parser, HEADER, BASE, TIME)
    space = Claim("vam-variants.header-memory", s.title, "Headers on small objects cost memory on average",
                  Source("Vam 2005", "§3.3", "Vam uses the BIBOP technique to eliminate individual object headers "
                                             "only for small objects, where the resulting space savings and "
                                             "locality improvement are the most significant."),
                  "geometric mean over workloads of vam-header / vam most pages in use (memory runs)", Above(1.0),
                  "more pages (no figure)",
                  why="a workload whose small objects are few next to its large ones (Statistics section: average "
                      "sizes) has little to save")
    program_pairs.judge_average(r, s, space, e, HEADER, BASE, PAGES)


def _class_claims(r: Results, s: Section, e) -> None:
    space = Claim("vam-variants.coarse-memory", s.title, "Coarse (power-of-two) size classes cost memory on average",
                  Source("Vam 2005", "§4.3", "Although PHK_sc's changes in cache misses do not notably affect the "
                                             "overall run times shown in Figure 4(c), it greatly improves the space "
                                             "efficiency over the original allocator and achieves better VM "
                                             "performance when under memory pressure."),
                  "geometric mean over workloads of vam-coarse / vam most pages in use (memory runs)", Above(1.0),
                  "fine classes: much less space",
                  why="vam-coarse is only the class step (power-of-two classes); PHKmalloc's other differences "
                      "(bitmaps, its page directory) are not in it")
    program_pairs.judge_average(r, s, space, e, COARSE, BASE, PAGES)
    time = Claim("vam-variants.coarse-time", s.title, "The size classes' granularity hardly changes run time",
                 Source("Vam 2005", "§4.3, Fig. 4c", "Although PHK_sc's changes in cache misses do not notably "
                                                     "affect the overall run times shown in Figure 4(c)"),
                 f"geometric mean over workloads of vam-coarse / vam {r.timing.name}", Within(0.95, 1.05),
                 "no notable change (margin ±5%, ours)",
                 why="on stand-ins that allocate faster than the SPEC programs, a class's cache behaviour shows more "
                     "in run time (Statistics section)")
    program_pairs.judge_average(r, s, time, e, COARSE, BASE, TIME)
