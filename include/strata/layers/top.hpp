// Top heaps: where memory comes from.
#pragma once
#include "strata/layers/top/malloc_heap.hpp"
