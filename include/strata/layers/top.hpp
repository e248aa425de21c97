// Top heaps: where memory comes from.
#pragma once
#include "strata/layers/top/malloc_heap.hpp"
#include "strata/layers/top/mmap_heap.hpp"
#include "strata/layers/top/null_heap.hpp"
#include "strata/layers/top/sbrk_heap.hpp"
