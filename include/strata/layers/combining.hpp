// Combining heaps: several heaps behind one interface.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/combining/area_seg_heap.hpp"
#include "strata/layers/combining/hybrid_heap.hpp"
#include "strata/layers/combining/seg_heap.hpp"
#include "strata/layers/combining/select_mmap_heap.hpp"
#include "strata/layers/combining/strict_seg_heap.hpp"
#include "strata/layers/combining/threshold_heap.hpp"
