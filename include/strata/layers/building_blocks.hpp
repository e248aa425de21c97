// building_blocks layers (see include/strata/layers/building_blocks/).
#pragma once
#include "strata/layers/heap.hpp"
