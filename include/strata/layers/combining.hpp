// Combining heaps: several heaps behind one interface.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/combining/strict_seg_heap.hpp"
