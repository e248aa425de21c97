// Special-purpose layers: stack-like, region and pool allocation.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/special/mempool_heap.hpp"
#include "strata/layers/special/nested_region_heap.hpp"
#include "strata/layers/special/obstack_heap.hpp"
#include "strata/layers/special/xalloc_heap.hpp"
#include "strata/layers/special/zone_heap.hpp"
