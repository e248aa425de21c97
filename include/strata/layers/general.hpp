// General-purpose heaps: complete allocators composed from the layers.
#pragma once
#include "strata/layers/general/kingsley_coalescing_heap.hpp"
#include "strata/layers/general/kingsley_heap.hpp"
#include "strata/layers/general/lea_heap.hpp"
#include "strata/layers/heap.hpp"
