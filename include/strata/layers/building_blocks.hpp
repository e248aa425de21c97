// Building-block heaps: small pieces to compose.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/building_blocks/freelist_heap.hpp"
