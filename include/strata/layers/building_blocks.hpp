// Building-block heaps: small pieces to compose.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/building_blocks/adapt_heap.hpp"
#include "strata/layers/building_blocks/bounded_freelist_heap.hpp"
#include "strata/layers/building_blocks/chunk_heap.hpp"
#include "strata/layers/building_blocks/coalesce_heap.hpp"
#include "strata/layers/building_blocks/dl_list.hpp"
#include "strata/layers/building_blocks/freelist_heap.hpp"
#include "strata/layers/building_blocks/intrusive_dlist.hpp"
#include "strata/layers/building_blocks/intrusive_slist.hpp"
#include "strata/layers/building_blocks/sl_list.hpp"
