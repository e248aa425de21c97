// Object representation: what a heap records about each object.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/object_representation/coalesceable_heap.hpp"
#include "strata/layers/object_representation/size_heap.hpp"
