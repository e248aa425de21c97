"""One module per report section, each mirroring a paper's figure or table."""
from . import (calibration, drag, general_purpose, hardening, heap_layers, occupancy, page_locality, per_class, reaps,
               real_programs, regions, resilience, statistics)
from . import vam_variants

# Report order; the keys are evaluation.configuration.SECTIONS plus drag.
SECTIONS = {"per-class": per_class.build, "regions": regions.build, "resilience": resilience.build,
            "occupancy": occupancy.build,
            "real-programs": real_programs.build, "reaps": reaps.build, "drag": drag.build,
            "statistics": statistics.build, "calibration": calibration.build, "general-purpose": general_purpose.build,
            "heap-layers": heap_layers.build, "vam-variants": vam_variants.build,
            "page-locality": page_locality.build, "hardening": hardening.build}
