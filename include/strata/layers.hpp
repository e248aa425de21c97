// strata heap layers — umbrella header. Each category header includes one
// header per layer; see README.md ("Adding a layer").
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/platform.hpp"
#include "strata/layers/top.hpp"
#include "strata/layers/building_blocks.hpp"
#include "strata/layers/combining.hpp"
#include "strata/layers/object_representation.hpp"
#include "strata/layers/utility.hpp"
#include "strata/layers/special.hpp"
#include "strata/layers/general.hpp"
#include "strata/layers/region.hpp"
